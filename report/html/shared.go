package html

// Assets are the viewer's shared assets, for other pages built on the same
// code (report/live's live view): the vendored uPlot (script and styles),
// core.js (decoding, pyramid, aggregation, selection math, the time axis's
// controls) and the viewer's styles.
type Assets struct {
	UplotJS, UplotCSS, CoreJS, AppCSS string
	UplotVersion                      string
}

// SharedAssets returns the embedded shared assets.
func SharedAssets() Assets {
	return Assets{UplotJS: uplotJS, UplotCSS: uplotCSS, CoreJS: coreJS, AppCSS: appCSS, UplotVersion: UplotVersion}
}
