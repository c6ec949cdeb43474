package files

// formats are the formats this package reads, in the order Detect tries
// them: the binary format by its magic first, then the CSV exports by
// their header lines. A new format is one file with its Format value and
// one line here.
var formats = []*Format{
	jlsFormat,
	ppk2CSVFormat,
	otiiCSVFormat,
}

// The formats' names (Format.Name, Info.Format, ParseError.Format).
const (
	jlsName  = "jls"
	ppk2Name = "ppk2-csv"
	otiiName = "otii-csv"
)
