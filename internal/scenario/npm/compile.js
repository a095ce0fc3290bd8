// Compiles flowq's own scenario contracts (../contracts/*.sol) with the
// solc-js compiler that the npm `solc` package bundles (soljson.js: no
// download, works offline) and writes one artifact per contract to
// ./build/<Name>.json: {"contractName", "abi", "bytecode", "deployedBytecode",
// "compiler"}. Run by `make test` (see the Makefile's scenario-setup target)
// after `npm ci`.
"use strict";
const fs = require("fs");
const path = require("path");
const solc = require("solc");

const srcDir = path.join(__dirname, "..", "contracts");
const outDir = path.join(__dirname, "build");

const sources = {};
for (const f of fs.readdirSync(srcDir).sort()) {
  if (f.endsWith(".sol")) {
    sources[f] = { content: fs.readFileSync(path.join(srcDir, f), "utf8") };
  }
}
const input = {
  language: "Solidity",
  sources,
  settings: {
    optimizer: { enabled: true, runs: 200 },
    evmVersion: "cancun",
    outputSelection: { "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] } },
  },
};
const output = JSON.parse(solc.compile(JSON.stringify(input)));
let failed = false;
for (const e of output.errors || []) {
  if (e.severity === "error") failed = true;
  process.stderr.write(e.formattedMessage + "\n");
}
if (failed) process.exit(1);
fs.mkdirSync(outDir, { recursive: true });
let n = 0;
for (const file of Object.keys(output.contracts).sort()) {
  for (const name of Object.keys(output.contracts[file]).sort()) {
    const c = output.contracts[file][name];
    if (!c.evm.bytecode.object) continue; // interfaces
    const art = {
      contractName: name,
      sourceName: file,
      compiler: "solc " + solc.version(),
      abi: c.abi,
      bytecode: "0x" + c.evm.bytecode.object,
      deployedBytecode: "0x" + c.evm.deployedBytecode.object,
    };
    fs.writeFileSync(path.join(outDir, name + ".json"), JSON.stringify(art, null, 1) + "\n");
    n++;
  }
}
process.stdout.write(`compiled ${n} contracts with solc ${solc.version()} into ${path.relative(process.cwd(), outDir) || "."}\n`);
