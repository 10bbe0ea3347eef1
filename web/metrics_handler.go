package web

import (
	"github.com/labstack/echo/v4"

	"github.com/madebook/madebook/web/httpx"
	"github.com/madebook/madebook/web/metrics"
)

// handleMetrics serves GET /metrics (admin token): the Prometheus text
// format. A scraper without an admin's token reads them on the separate
// listener instead (serve --metrics-addr).
func handleMetrics(m *metrics.Metrics) echo.HandlerFunc {
	h := echo.WrapHandler(m.Handler())
	return func(c echo.Context) error {
		if err := httpx.Actor(c).RequireAdmin("read the metrics"); err != nil {
			return err
		}
		return h(c)
	}
}
