// Package ingest is the pipeline that fills the index (package index,
// which only stores): inputs (files named or found in folders, bundles in
// memory, read with a size bound), decoding (normalform/trace) and
// analysis on all cores, each input's transactions put back in input
// order, written in batches through index.Batches with each input's
// failures and marker, the Summary, and the one progress bar (Bar), which
// index/fetch draws its blocks with too. Ingest, RetryFailed and the
// streaming Ingester (NewIngester, Add, Close) are its entry points; the
// ingest's behaviour is described in package index's documentation
// ("Writing").
package ingest
