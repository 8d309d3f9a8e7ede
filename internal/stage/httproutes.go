package stage

import "net/http"

// Mount serves h, with whatever routes mounts beside it (Config.HTTPRoutes)
// on one mux: a route routes registers wins over h for its paths. A nil
// routes serves h alone.
func Mount(h http.Handler, routes func(*http.ServeMux)) http.Handler {
	if routes == nil {
		return h
	}
	mux := http.NewServeMux()
	mux.Handle("/", h)
	routes(mux)
	return mux
}
