# servelab in a container. Two stages: the first builds ./servelab on
# Debian 12 with the compiler and the -dev packages; the second is
# debian:12-slim with only the shared libraries servelab loads (and CA
# certificates for https:// targets), so the image carries no compiler.
#
#   docker build --network host -t servelab .
#   docker run --rm -v "$PWD":/out servelab demo      # leaves ./demo-out
#   docker run --rm --network host servelab run --url http://127.0.0.1:8000 ...
#
# The build context has no .git (.dockerignore), so the commit that
# meta.json records comes in as a build argument:
#   docker build --build-arg GIT_COMMIT=$(git rev-parse --short HEAD) ...
# Without registry access, scripts/docker_image.sh makes both base images
# from Debian's packages with debootstrap.

FROM debian:12 AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        gcc make pkg-config libc6-dev \
        libevent-dev libcurl4-openssl-dev libjansson-dev libyaml-dev \
 && apt-get clean && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
ARG GIT_COMMIT=unknown
RUN make -j"$(nproc)" servelab GIT_COMMIT="$GIT_COMMIT"

FROM debian:12-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        libevent-2.1-7 libevent-pthreads-2.1-7 libcurl4 libjansson4 libyaml-0-2 \
        ca-certificates \
 && apt-get clean && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/servelab /usr/local/bin/servelab
# Output lands in the working directory (`demo` writes demo-out/ there):
# mount a host folder on /out to keep it. Writable by any --user, like /tmp.
RUN mkdir -m 1777 /out
WORKDIR /out
ENTRYPOINT ["servelab"]
CMD ["--help"]
