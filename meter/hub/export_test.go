package hub

// MatchesReference is matchesReference (decode_ref_test.go) for the
// external tests, whose streams come from hubemu.
var MatchesReference = matchesReference
