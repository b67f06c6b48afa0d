// Baseline: the least a proxy hop costs in Go. net/http/httputil's ReverseProxy in front of one
// upstream, no auth, limits, parsing or billing; answers are flushed as they come (streams included).
// It cuts about 1 stream in 2,500 (its log: "use of closed network connection" reading the upstream's
// body; FlushInterval -1 or 0 alike; none in 13,000 with the upstream connections not kept alive, and
// none in 10,000 from a plain Go client to the same simulator): bench:peers prints them as failed requests.
// bench:peers builds it (standard library only) into ~/.cache/model-gateway/peers/ and runs it beside
// the bare Koa relay (bare-proxy.ts) and the gateway.
//
//	PORT=... UPSTREAM=http://127.0.0.1:<sim>/ch/openai-a bare-go-proxy
package main

import (
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"time"
)

func main() {
	upstream, err := url.Parse(os.Getenv("UPSTREAM"))
	if err != nil || upstream.Host == "" {
		log.Fatalf("UPSTREAM must be an absolute URL: %q", os.Getenv("UPSTREAM"))
	}
	transport := &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: 30 * time.Second}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(upstream)
			r.Out.Header.Set("Authorization", "Bearer upstream")
		},
		Transport:     transport,
		FlushInterval: -1,
	}
	server := &http.Server{Addr: "127.0.0.1:" + os.Getenv("PORT"), Handler: proxy, IdleTimeout: 30 * time.Second}
	log.Fatal(server.ListenAndServe())
}
