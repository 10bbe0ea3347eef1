package console

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/internal/audit"
	"github.com/madebook/madebook/views"
)

// handleAudit serves GET /audit (anyone signed in): the built-in reports
// with how many rows each finds now.
func (k *console) handleAudit() echo.HandlerFunc {
	return func(c echo.Context) error {
		results, err := k.audit.RunAll(c.Request().Context(), audit.Options{})
		if err != nil {
			return err
		}
		p, err := k.page(c, "Audit", "audit")
		if err != nil {
			return err
		}
		return render(c, http.StatusOK, views.AuditPage(p, views.AuditIndex{Results: results}))
	}
}

// handleAuditReport serves GET /audit/:report (anyone signed in): one
// report's rows. GET /audit/:report.csv, or ?format=csv, downloads the
// same rows as CSV. stale-gates takes ?older_than=36h, undelivered-resolutions
// ?min_age=10m.
func (k *console) handleAuditReport() echo.HandlerFunc {
	return func(c echo.Context) error {
		name, csv := strings.CutSuffix(c.Param("report"), ".csv")
		csv = csv || c.QueryParam("format") == "csv"
		if _, err := audit.Lookup(name); err != nil {
			return err
		}
		opts, err := audit.ParseOptions(c.QueryParam("older_than"), c.QueryParam("min_age"))
		if err != nil {
			return err
		}
		res, err := k.audit.Run(c.Request().Context(), name, opts)
		if err != nil {
			return err
		}
		if csv {
			var b bytes.Buffer
			if err := audit.WriteCSV(&b, res); err != nil {
				return err
			}
			h := c.Response().Header()
			h.Set("Content-Disposition", `attachment; filename="madebook-`+name+`.csv"`)
			h.Set("X-Content-Type-Options", "nosniff")
			return c.Blob(http.StatusOK, "text/csv; charset=utf-8", b.Bytes())
		}
		p, err := k.page(c, res.Report.Title, "audit")
		if err != nil {
			return err
		}
		older := c.QueryParam("older_than")
		download := "/audit/" + name + ".csv"
		if older != "" {
			download += "?" + url.Values{"older_than": {older}}.Encode()
		}
		return render(c, http.StatusOK, views.AuditReportPage(p, views.AuditReportView{R: res, OlderThan: older, CSV: download}))
	}
}
