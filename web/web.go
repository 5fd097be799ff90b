// Package web holds the server-rendered templates (the widget's, and the
// panel's under templates/panel) and the static assets
// (styles, the widget's script, the embed script), embedded in the binary.
package web

import (
	"embed"
	"html/template"
	"io/fs"
)

//go:embed templates static
var files embed.FS

// Static is the static assets, served under /static/.
var Static, _ = fs.Sub(files, "static")

// Templates parses the widget's page templates.
func Templates() (*template.Template, error) {
	return template.ParseFS(files, "templates/*.html")
}

// Panel is the admin panel's templates: layout.html and one file per page.
var Panel, _ = fs.Sub(files, "templates/panel")
