# mongobench's container image: one static binary on a distroless base.
#
#   docker build -t mongobench:dev .
#   docker run --rm mongobench:dev version
#
# The binary is built without cgo: the embedded FerretDB's SQLite is a pure-Go
# port, so the image needs no C library and runs on the "static" distroless
# base, which holds CA certificates (for TLS connection strings), time zone
# data and the unprivileged user nonroot (65532), and no shell.
# docs/kubernetes.md shows how the manifests of `mongobench kube` use it.

FROM golang:1.26-bookworm AS build
WORKDIR /src
# Modules first, so that a change to the sources reuses this layer.
COPY go.mod go.sum ./
RUN go mod download && go mod verify
COPY . .
# -trimpath keeps the build machine's paths out of the binary; the version
# the results files record is "devel" plus the module's build information
# (.git is not sent to the build: see .dockerignore).
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/mongobench ./cmd/mongobench

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/mongobench /usr/local/bin/mongobench
USER 65532:65532
# The embedded FerretDB and temporary files go to TMPDIR; the manifests
# mount a writable emptyDir there, since they make the root read-only.
ENV TMPDIR=/tmp
ENTRYPOINT ["/usr/local/bin/mongobench"]
CMD ["--help"]
