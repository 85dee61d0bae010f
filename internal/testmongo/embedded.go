package testmongo

import (
	"context"
	"time"

	"github.com/bankd/bankd/embedmongo"
)

func startEmbedded(ctx context.Context) target {
	srv, err := embedmongo.Start(ctx, embedmongo.Options{TTLMonitorPeriod: time.Second})
	if err != nil {
		return target{name: "embedmongo", err: err}
	}
	return target{name: "embedmongo", uri: srv.URI(), close: func() { _ = srv.Close() }}
}
