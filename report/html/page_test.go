package html

import (
	"bytes"
	"testing"
	"text/template"
)

// TestPageHalvesAreThePage: the page's template executed in its two
// halves with the data written between them is, byte for byte, the whole
// template executed with the data as {{.Data}} (as build did before).
func TestPageHalvesAreThePage(t *testing.T) {
	whole := template.Must(template.New("page").Parse(pageTmpl))
	data := `{"schema":"idlewatt.html/v1","x":"\u003c/script\u003e AAAA+/==","n":[1,2.5e-7]}`
	vars := map[string]any{"Title": template.HTMLEscapeString(`a <b> & "c"`), "UplotCSS": uplotCSS, "AppCSS": appCSS,
		"UplotJS": uplotJS, "CoreJS": coreJS, "AppJS": appJS}
	var halves bytes.Buffer
	if err := pageHead.Execute(&halves, vars); err != nil {
		t.Fatal(err)
	}
	halves.WriteString(data)
	if err := pageTail.Execute(&halves, vars); err != nil {
		t.Fatal(err)
	}
	vars["Data"] = data
	var want bytes.Buffer
	if err := whole.Execute(&want, vars); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(halves.Bytes(), want.Bytes()) {
		t.Fatalf("the halves give %d bytes, the whole template %d", halves.Len(), want.Len())
	}
	if !bytes.Contains(halves.Bytes(), []byte(data)) {
		t.Fatal("the data is not on the page")
	}
}
