# chartkit in a minimal image: the static release binary (scripts/build-release; the
# release profile leaves out debug information, the image its symbol table too) on distroless's static base, running as a
# non-root user. The default command serves the chart repository in /data on port 8879;
# deploy/chartkit-serve is the chart that runs it.
#
#   docker build -t chartkit .
#   docker run -p 8879:8879 -v charts:/data chartkit
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
# The binary is linked statically (glibc 2.36 resolves names without loading NSS
# modules), so it needs nothing from the image it runs in.
# The image's copy is stripped of its symbol table too (57 MB instead of 68 MB, below helm's
# 63 MB; BENCHMARKS.md): a container is not where anyone runs a profiler, and a panic still
# prints its message.
RUN cp "$(scripts/build-release --quiet --locked)" /chartkit && strip --strip-all /chartkit

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /chartkit /usr/local/bin/chartkit
USER 65532:65532
EXPOSE 8879
VOLUME ["/data"]
ENTRYPOINT ["/usr/local/bin/chartkit"]
CMD ["serve", "/data", "--addr", "0.0.0.0:8879"]
