package serve

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed web
var webFiles embed.FS

// webHandler serves the web page: web/index.html at /, its script and
// style beside it. No build step: the files are what the browser runs.
func webHandler() http.Handler {
	sub, err := fs.Sub(webFiles, "web")
	if err != nil {
		panic(err) // the embedded tree has web/: a build without it fails above
	}
	return http.FileServerFS(sub)
}
