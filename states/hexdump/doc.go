// Package hexdump reads the byte dumps people paste: xxd (any -g group
// size), hexdump -C, od -A x -t x1 (and od -t x1 with its default octal
// offsets), nvme-cli's own dump (get-feature without -H, the "0000: 18 64
// … \"ascii\"" lines under a "0 1 2 … f" header), smartctl's "0000030: …"
// log pages, and bare lines of two-digit hex bytes.
//
// # Rules
//
// A line is an optional offset, the bytes, and an optional text column.
// The text column is cut at its opening delimiter (hexdump -C '|',
// nvme-cli '"', od -t x1z '>') or, for xxd, at the two spaces that end
// the hex area. An offset must equal the number of bytes read so far
// ("a line missing?" otherwise), except after a "*" line, which repeats the
// previous line up to the next offset (hexdump and od collapse identical
// lines). A trailing offset alone (hexdump -C and od end with one) must
// equal the total. Offsets are hex, except od's default 7-digit ones
// without a colon, which are octal. Tokens of 4 or 8 digits are xxd's
// byte groups in file order when the line has a colon offset; without one
// they are od -x / hexdump words in host byte order, which are refused
// (the order cannot be known). Lines before the first data line that are
// not data (a command, a banner, nvme-cli's get-feature line) are skipped;
// after it, a line that is not data is an error naming the line.
//
// Parse takes an io.Reader and returns the bytes; callers check the size
// they expect (4096 for NVMe Identify Controller, 512 for ATA IDENTIFY or a
// log page, 256 for the APST table).
//
// # Where it sits
//
// The states floor (rank 1), standard library only; states/alpm,
// states/nvme and states/decode import it.
package hexdump
