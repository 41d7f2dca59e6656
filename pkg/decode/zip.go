package decode

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"strings"

	"connector/pkg/manifest"
)

// unzipped is the CDK's ZipfileDecoder: the files of the zip in the order of its directory,
// each read by the inner decoder. Directories are passed over. What all the files expand to
// together is bounded by the body limit.
type unzipped struct {
	d     *Decoder
	inner *manifest.Decoder
	files []*zip.File
	i     int // the file being read is files[i-1]
	cur   values
	rc    io.ReadCloser
	left  int64
}

func (d *Decoder) unzip(inner *manifest.Decoder, in input) (values, error) {
	b, err := in.all()
	if err != nil {
		return nil, err
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("the body is not a zip file (%v)", err)
	}
	return &unzipped{d: d, inner: inner, files: zr.File, left: d.limit}, nil
}

func (u *unzipped) where() string {
	if u.i == 0 {
		return ""
	}
	w := "file " + u.files[u.i-1].Name + " of the zip"
	if u.cur != nil {
		if s := u.cur.where(); s != "" {
			w += ", " + s
		}
	}
	return w
}

func (u *unzipped) next() ([]byte, error) {
	for {
		if u.cur != nil {
			v, err := u.cur.next()
			if err != io.EOF {
				return v, err
			}
			u.rc.Close()
			u.cur, u.rc = nil, nil
		}
		if u.i == len(u.files) {
			return nil, io.EOF
		}
		f := u.files[u.i]
		u.i++
		if strings.HasSuffix(f.Name, "/") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("cannot be read (%v)", err)
		}
		u.rc = rc
		r := &capped{r: rc, left: &u.left, err: &TooLargeError{What: "the content of the zip", Limit: u.d.limit, Flag: u.d.flag}}
		u.cur, err = u.d.open(u.inner, input{r: &zipErrs{r}})
		if err != nil {
			return nil, err
		}
	}
}

// zipErrs says that an error of reading came from the zip.
type zipErrs struct{ r io.Reader }

func (z *zipErrs) Read(p []byte) (int, error) {
	n, err := z.r.Read(p)
	if err != nil && err != io.EOF {
		if _, ok := err.(*TooLargeError); !ok {
			err = fmt.Errorf("cannot be unzipped (%v)", err)
		}
	}
	return n, err
}

// zipDecoder is ZipfileDecoder: each file of the archive, read by the inner decoder.
func zipDecoder(d *Decoder, m *manifest.Decoder, in input) (values, error) {
	return d.unzip(m.Inner, in)
}
