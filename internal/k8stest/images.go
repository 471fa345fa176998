package k8stest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ImageSet names the two local test images and their saved tarballs.
// Both hold one file, /podnet (test/k8s/podnet): the pause image runs
// "podnet pause", the podnet image runs the subcommand a pod is given.
type ImageSet struct {
	Pause     string // reference of the pause (sandbox) image
	PauseTar  string // its `podman save` archive
	Podnet    string // reference of the test image, entrypoint /podnet
	PodnetTar string // its `podman save` archive
}

// imageFiles are the Containerfiles, by image name.
var imageFiles = map[string]string{
	"pause":  "FROM scratch\nCOPY podnet /podnet\nENTRYPOINT [\"/podnet\", \"pause\"]\n",
	"podnet": "FROM scratch\nCOPY podnet /podnet\nENTRYPOINT [\"/podnet\"]\nCMD [\"sleep\"]\n",
}

var (
	imagesOnce sync.Once
	imagesSet  *ImageSet
	imagesErr  error
)

// Images builds the pause and podnet images with podman (once per test
// binary) and returns their references and archives. The archives are
// cached under CacheDir()/images by a hash of the podnet binary and the
// Containerfiles, so a rebuild happens only when podnet changes.
// Containerd imports both into every containerd it starts.
func Images(t testing.TB) *ImageSet {
	t.Helper()
	needRoot(t)
	needTools(t, "podman", "runc")
	imagesOnce.Do(func() { imagesSet, imagesErr = buildImages(repoRoot(t)) })
	if imagesErr != nil {
		t.Fatalf("k8stest: images: %v", imagesErr)
	}
	return imagesSet
}

func buildImages(root string) (*ImageSet, error) {
	work, err := os.MkdirTemp("", "k8stest-img-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	bin := filepath.Join(work, "bin", "podnet")
	cmd := exec.Command(goTool(), "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "./test/k8s/podnet")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build test/k8s/podnet: %v: %s", err, out)
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	h.Write(b)
	h.Write([]byte(imageFiles["pause"] + imageFiles["podnet"]))
	tag := hex.EncodeToString(h.Sum(nil))[:16]
	dir := filepath.Join(CacheDir(), "images")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	set := &ImageSet{}
	for _, name := range []string{"pause", "podnet"} {
		ref := "localhost/skbtrace-k8stest/" + name + ":" + tag
		tar := filepath.Join(dir, name+"-"+tag+".tar")
		if _, err := os.Stat(tar); err != nil {
			if err := podmanImage(work, bin, name, ref, tar); err != nil {
				return nil, err
			}
		}
		if name == "pause" {
			set.Pause, set.PauseTar = ref, tar
		} else {
			set.Podnet, set.PodnetTar = ref, tar
		}
	}
	return set, nil
}

// podmanImage builds image ref from imageFiles[name] and the podnet
// binary, saves it to tar and removes it from podman's store.
func podmanImage(work, bin, name, ref, tar string) error {
	ctx := filepath.Join(work, name)
	if err := os.MkdirAll(ctx, 0o755); err != nil {
		return err
	}
	if err := os.Link(bin, filepath.Join(ctx, "podnet")); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(ctx, "Containerfile"), []byte(imageFiles[name]), 0o644); err != nil {
		return err
	}
	if _, err := run(2*time.Minute, "podman", "--runtime", "runc", "build", "-q", "-f", filepath.Join(ctx, "Containerfile"), "-t", ref, ctx); err != nil {
		return err
	}
	defer run(time.Minute, "podman", "--runtime", "runc", "rmi", "-f", ref)
	tmp := tar + ".tmp"
	os.Remove(tmp)
	if _, err := run(2*time.Minute, "podman", "--runtime", "runc", "save", "-q", "-o", tmp, ref); err != nil {
		return err
	}
	return os.Rename(tmp, tar)
}

// ImportImage imports an image archive (`podman save`, docker or OCI
// format) into this containerd's k8s.io namespace, where the CRI and
// kubelet see it, and checks that ref is then known to the CRI. Pods
// must use it with no pull (imagePullPolicy: Never): nothing is pulled.
func (c *CRI) ImportImage(t testing.TB, ref, tarball string) {
	t.Helper()
	if _, err := run(2*time.Minute, "ctr", "--address", c.Socket, "-n", "k8s.io", "images", "import", tarball); err != nil {
		t.Fatalf("k8stest: import %s: %v", tarball, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := c.Images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: ref}})
	if err != nil {
		t.Fatalf("k8stest: CRI ImageStatus %s: %v", ref, err)
	}
	if st.Image == nil {
		t.Fatalf("k8stest: %s imported, but the CRI does not know %s", tarball, ref)
	}
}
