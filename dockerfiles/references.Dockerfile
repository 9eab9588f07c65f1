# References the tuned variants are ranked against. Appended after the main
# recipe (Dockerfile) by dockerfiles.Render, so BASE, the source stage and the
# named context "sources" are the same ones the variants use.

# ---------------------------------------------------------------- stock
# The base image's own redis-server package (/usr/bin/redis-server), with the
# runtime conventions of the other images as far as the package allows.

FROM ${BASE} AS stock
ENV DEBIAN_FRONTEND=noninteractive
RUN set -eux; \
	groupadd -r -g 999 redis; \
	useradd -r -g redis -u 999 -d /var/lib/redis redis; \
	printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod 755 /usr/sbin/policy-rc.d; \
	apt-get update; \
	apt-get install -y --no-install-recommends redis-server; \
	rm -rf /var/lib/apt/lists/* /usr/sbin/policy-rc.d; \
	mkdir /data; chown redis:redis /data; \
	mkdir -p /usr/local/share/redis-variants; \
	dpkg-query -W -f='${Package} ${Version}\n' redis-server redis-tools > /usr/local/share/redis-variants/packages; \
	redis-server --version
VOLUME /data
WORKDIR /data
USER redis
EXPOSE 6379
CMD ["redis-server", "--protected-mode", "no"]
ARG CREATED
ARG VARIANT_NAME
ARG VARIANT_ID
ARG VARIANT_KIND
ARG VARIANT_SPEC
ARG REDIS_VERSION
ARG SOURCE_URL
ARG SOURCE_SHA256
ARG COMPILER
ARG COMPILER_VERSION
ARG LABEL_CFLAGS
ARG LABEL_LDFLAGS
ARG OPT
ARG MARCH
ARG MTUNE
ARG LTO
ARG ALLOCATOR
ARG TLS
ARG LIBC
ARG BUILD_CPU
ARG BUILD_LEVEL
ARG ISA_LEVEL
ARG ISA_FLAGS
ARG RECIPE_DIGEST
LABEL org.opencontainers.image.title="redis-variants/${VARIANT_NAME}" \
	org.opencontainers.image.description="Redis ${REDIS_VERSION} built by redis-variants: ${VARIANT_NAME}" \
	org.opencontainers.image.version="${REDIS_VERSION}" \
	org.opencontainers.image.source="${SOURCE_URL}" \
	org.opencontainers.image.revision="${SOURCE_SHA256}" \
	org.opencontainers.image.created="${CREATED}" \
	io.redis-variants.name="${VARIANT_NAME}" \
	io.redis-variants.id="${VARIANT_ID}" \
	io.redis-variants.kind="${VARIANT_KIND}" \
	io.redis-variants.spec="${VARIANT_SPEC}" \
	io.redis-variants.redis.version="${REDIS_VERSION}" \
	io.redis-variants.compiler="${COMPILER}" \
	io.redis-variants.compiler.version="${COMPILER_VERSION}" \
	io.redis-variants.cflags="${LABEL_CFLAGS}" \
	io.redis-variants.ldflags="${LABEL_LDFLAGS}" \
	io.redis-variants.opt="${OPT}" \
	io.redis-variants.march="${MARCH}" \
	io.redis-variants.mtune="${MTUNE}" \
	io.redis-variants.lto="${LTO}" \
	io.redis-variants.allocator="${ALLOCATOR}" \
	io.redis-variants.tls="${TLS}" \
	io.redis-variants.libc="${LIBC}" \
	io.redis-variants.source.sha256="${SOURCE_SHA256}" \
	io.redis-variants.build.cpu="${BUILD_CPU}" \
	io.redis-variants.build.x86-64-level="${BUILD_LEVEL}" \
	io.redis-variants.isa.level="${ISA_LEVEL}" \
	io.redis-variants.isa.flags="${ISA_FLAGS}" \
	io.redis-variants.recipe="${RECIPE_DIGEST}"
# ------------------------------------------------------------- official
# The official image's recipe (docker-library/redis, 7.0 on bookworm)
# rebuilt from the same source archive: gcc from Debian, BUILD_TLS=yes,
# Redis's default OPTIMIZATION (-O2) and bundled jemalloc configured like
# Debian's, protected mode off by default (the official sed of config.c).

FROM ${BASE} AS official-build
ENV DEBIAN_FRONTEND=noninteractive
# OFFICIAL_PACKAGES: what the recipe of this Redis version adds (8.0: g++,
# for deps/fast_float).
ARG OFFICIAL_PACKAGES=
RUN set -eux; \
	apt-get update; \
	apt-get install -y --no-install-recommends ca-certificates dpkg-dev gcc libc6-dev libssl-dev make $OFFICIAL_PACKAGES; \
	rm -rf /var/lib/apt/lists/*
COPY --from=source /src/redis /usr/src/redis
RUN set -eux; \
	grep -E '^ *createBoolConfig[(]"protected-mode",.*, *1 *,.*[)],$' /usr/src/redis/src/config.c; \
	sed -ri 's!^( *createBoolConfig[(]"protected-mode",.*, *)1( *,.*[)],)$!\10\2!' /usr/src/redis/src/config.c; \
	grep -E '^ *createBoolConfig[(]"protected-mode",.*, *0 *,.*[)],$' /usr/src/redis/src/config.c; \
	gnuArch="$(dpkg-architecture --query DEB_BUILD_GNU_TYPE)"; \
	extraJemallocConfigureFlags="--build=$gnuArch"; \
	dpkgArch="$(dpkg --print-architecture)"; \
	case "${dpkgArch##*-}" in \
		amd64 | i386 | x32) extraJemallocConfigureFlags="$extraJemallocConfigureFlags --with-lg-page=12" ;; \
		*) extraJemallocConfigureFlags="$extraJemallocConfigureFlags --with-lg-page=16" ;; \
	esac; \
	extraJemallocConfigureFlags="$extraJemallocConfigureFlags --with-lg-hugepage=21"; \
	grep -F 'cd jemalloc && ./configure ' /usr/src/redis/deps/Makefile; \
	sed -ri 's!cd jemalloc && ./configure !&'"$extraJemallocConfigureFlags"' !' /usr/src/redis/deps/Makefile; \
	grep -F "cd jemalloc && ./configure $extraJemallocConfigureFlags " /usr/src/redis/deps/Makefile; \
	export BUILD_TLS=yes; \
	make -C /usr/src/redis -j "$(nproc)" all; \
	make -C /usr/src/redis install; \
	serverMd5="$(md5sum /usr/local/bin/redis-server | cut -d' ' -f1)"; export serverMd5; \
	find /usr/local/bin/redis* -maxdepth 0 \
		-type f -not -name redis-server \
		-exec sh -eux -c ' \
			md5="$(md5sum "$1" | cut -d" " -f1)"; \
			test "$md5" = "$serverMd5"; \
		' -- '{}' ';' \
		-exec ln -svfT 'redis-server' '{}' ';' \
	; \
	mkdir -p /out/share; \
	ldd /usr/local/bin/redis-server /usr/local/bin/redis-cli /usr/local/bin/redis-benchmark \
		| awk '/=>/ { so = $(NF-1); if (index(so, "/usr/local/") == 1) { next }; gsub("^/(usr/)?", "", so); printf "*%s\n", so }' \
		| sort -u | xargs -r dpkg-query --search | cut -d: -f1 | sort -u > /out/share/runtime-packages; \
	printf '{\n  "cc": "gcc",\n  "cc_version": "%s",\n  "server_version": "%s"\n}\n' \
		"$(gcc --version | head -1)" "$(/usr/local/bin/redis-server --version)" > /out/share/build-info.json; \
	redis-server --version

FROM ${BASE} AS official
ENV DEBIAN_FRONTEND=noninteractive
RUN set -eux; groupadd -r -g 999 redis; useradd -r -g redis -u 999 redis
COPY --from=official-build /out/share/runtime-packages /usr/local/share/redis-variants/runtime-packages
RUN set -eux; \
	missing=""; \
	for p in $(cat /usr/local/share/redis-variants/runtime-packages); do \
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"; \
	done; \
	if [ -n "$missing" ]; then \
		apt-get update; \
		apt-get install -y --no-install-recommends $missing; \
		rm -rf /var/lib/apt/lists/*; \
	fi
COPY --from=official-build /usr/local/bin/ /usr/local/bin/
COPY --from=official-build /out/share/ /usr/local/share/redis-variants/
RUN set -eux; \
	mkdir /data; chown redis:redis /data; \
	if ldd /usr/local/bin/redis-server | grep 'not found'; then exit 1; fi; \
	redis-server --version; redis-cli --version
VOLUME /data
WORKDIR /data
USER redis
EXPOSE 6379
CMD ["redis-server", "--protected-mode", "no"]
ARG CREATED
ARG VARIANT_NAME
ARG VARIANT_ID
ARG VARIANT_KIND
ARG VARIANT_SPEC
ARG REDIS_VERSION
ARG SOURCE_URL
ARG SOURCE_SHA256
ARG COMPILER
ARG COMPILER_VERSION
ARG LABEL_CFLAGS
ARG LABEL_LDFLAGS
ARG OPT
ARG MARCH
ARG MTUNE
ARG LTO
ARG ALLOCATOR
ARG TLS
ARG LIBC
ARG BUILD_CPU
ARG BUILD_LEVEL
ARG ISA_LEVEL
ARG ISA_FLAGS
ARG RECIPE_DIGEST
LABEL org.opencontainers.image.title="redis-variants/${VARIANT_NAME}" \
	org.opencontainers.image.description="Redis ${REDIS_VERSION} built by redis-variants: ${VARIANT_NAME}" \
	org.opencontainers.image.version="${REDIS_VERSION}" \
	org.opencontainers.image.source="${SOURCE_URL}" \
	org.opencontainers.image.revision="${SOURCE_SHA256}" \
	org.opencontainers.image.created="${CREATED}" \
	io.redis-variants.name="${VARIANT_NAME}" \
	io.redis-variants.id="${VARIANT_ID}" \
	io.redis-variants.kind="${VARIANT_KIND}" \
	io.redis-variants.spec="${VARIANT_SPEC}" \
	io.redis-variants.redis.version="${REDIS_VERSION}" \
	io.redis-variants.compiler="${COMPILER}" \
	io.redis-variants.compiler.version="${COMPILER_VERSION}" \
	io.redis-variants.cflags="${LABEL_CFLAGS}" \
	io.redis-variants.ldflags="${LABEL_LDFLAGS}" \
	io.redis-variants.opt="${OPT}" \
	io.redis-variants.march="${MARCH}" \
	io.redis-variants.mtune="${MTUNE}" \
	io.redis-variants.lto="${LTO}" \
	io.redis-variants.allocator="${ALLOCATOR}" \
	io.redis-variants.tls="${TLS}" \
	io.redis-variants.libc="${LIBC}" \
	io.redis-variants.source.sha256="${SOURCE_SHA256}" \
	io.redis-variants.build.cpu="${BUILD_CPU}" \
	io.redis-variants.build.x86-64-level="${BUILD_LEVEL}" \
	io.redis-variants.isa.level="${ISA_LEVEL}" \
	io.redis-variants.isa.flags="${ISA_FLAGS}" \
	io.redis-variants.recipe="${RECIPE_DIGEST}"

# ------------------------------------------------------ official-alpine
# The official Alpine image's recipe (docker-library/redis, 7.0 on alpine)
# rebuilt on musl: the offline stand-in for redis:<version>-alpine, used
# only when no registry has the real image. The build is the Debian
# recipe's with Alpine's compiler set-up: gcc on musl (Debian's musl-gcc
# specs, the kernel headers Alpine's linux-headers gives), the bundled
# jemalloc configured for an x86_64-linux-musl build, and Alpine's redis
# user (uid 999, gid 1000). One difference, labelled: BUILD_TLS is off,
# as Debian has no OpenSSL built against musl (the real image links it).

FROM toolchain-common AS official-alpine-build
RUN set -eux; \
	apt-get update; \
	apt-get install -y --no-install-recommends gcc dpkg-dev; \
	rm -rf /var/lib/apt/lists/*; \
	printf '#!/bin/sh\nexec gcc "$@" -isystem /usr/local/include/musl-kernel -specs /usr/lib/x86_64-linux-musl/musl-gcc.specs\n' > /usr/local/bin/musl-cc; \
	chmod 755 /usr/local/bin/musl-cc
COPY --from=source /src/redis /usr/src/redis
RUN set -eux; \
	grep -E '^ *createBoolConfig[(]"protected-mode",.*, *1 *,.*[)],$' /usr/src/redis/src/config.c; \
	sed -ri 's!^( *createBoolConfig[(]"protected-mode",.*, *)1( *,.*[)],)$!\10\2!' /usr/src/redis/src/config.c; \
	grep -E '^ *createBoolConfig[(]"protected-mode",.*, *0 *,.*[)],$' /usr/src/redis/src/config.c; \
	gnuArch="$(dpkg-architecture --query DEB_BUILD_GNU_TYPE | sed 's/-gnu$/-musl/')"; \
	extraJemallocConfigureFlags="--build=$gnuArch"; \
	dpkgArch="$(dpkg --print-architecture)"; \
	case "${dpkgArch##*-}" in \
		amd64 | i386 | x32) extraJemallocConfigureFlags="$extraJemallocConfigureFlags --with-lg-page=12" ;; \
		*) extraJemallocConfigureFlags="$extraJemallocConfigureFlags --with-lg-page=16" ;; \
	esac; \
	extraJemallocConfigureFlags="$extraJemallocConfigureFlags --with-lg-hugepage=21"; \
	grep -F 'cd jemalloc && ./configure ' /usr/src/redis/deps/Makefile; \
	sed -ri 's!cd jemalloc && ./configure !&'"$extraJemallocConfigureFlags"' !' /usr/src/redis/deps/Makefile; \
	grep -F "cd jemalloc && ./configure $extraJemallocConfigureFlags " /usr/src/redis/deps/Makefile; \
	export BUILD_TLS=no; \
	make -C /usr/src/redis -j "$(nproc)" all CC=musl-cc; \
	make -C /usr/src/redis install; \
	serverMd5="$(md5sum /usr/local/bin/redis-server | cut -d' ' -f1)"; export serverMd5; \
	find /usr/local/bin/redis* -maxdepth 0 \
		-type f -not -name redis-server \
		-exec sh -eux -c ' \
			md5="$(md5sum "$1" | cut -d" " -f1)"; \
			test "$md5" = "$serverMd5"; \
		' -- '{}' ';' \
		-exec ln -svfT 'redis-server' '{}' ';' \
	; \
	mkdir -p /out/share; \
	for b in /usr/local/bin/redis-server /usr/local/bin/redis-cli /usr/local/bin/redis-benchmark; do musl-ldd "$b" 2>/dev/null || true; done \
		| awk '/=>/ { so = $(NF-1); if (index(so, "/usr/local/") == 1) { next }; gsub("^/(usr/)?", "", so); printf "*%s\n", so }' \
		| sort -u | xargs -r dpkg-query --search | cut -d: -f1 | sort -u > /out/share/runtime-packages; \
	grep -qx musl /out/share/runtime-packages; \
	printf '{\n  "cc": "musl-cc",\n  "cc_version": "%s",\n  "libc": "musl",\n  "build_tls": "no",\n  "server_version": "%s"\n}\n' \
		"$(gcc --version | head -1)" "$(/usr/local/bin/redis-server --version)" > /out/share/build-info.json; \
	redis-server --version

FROM ${BASE} AS official-alpine
ENV DEBIAN_FRONTEND=noninteractive
RUN set -eux; groupadd -r -g 1000 redis; useradd -r -g redis -u 999 redis
COPY --from=official-alpine-build /out/share/runtime-packages /usr/local/share/redis-variants/runtime-packages
RUN set -eux; \
	apt-get update; \
	apt-get install -y --no-install-recommends $(cat /usr/local/share/redis-variants/runtime-packages); \
	rm -rf /var/lib/apt/lists/*
COPY --from=official-alpine-build /usr/local/bin/ /usr/local/bin/
COPY --from=official-alpine-build /out/share/ /usr/local/share/redis-variants/
RUN set -eux; \
	mkdir /data; chown redis:redis /data; \
	redis-server --version; redis-cli --version
VOLUME /data
WORKDIR /data
USER redis
EXPOSE 6379
CMD ["redis-server", "--protected-mode", "no"]
ARG CREATED
ARG VARIANT_NAME
ARG VARIANT_ID
ARG VARIANT_KIND
ARG VARIANT_SPEC
ARG REDIS_VERSION
ARG SOURCE_URL
ARG SOURCE_SHA256
ARG COMPILER
ARG COMPILER_VERSION
ARG LABEL_CFLAGS
ARG LABEL_LDFLAGS
ARG OPT
ARG MARCH
ARG MTUNE
ARG LTO
ARG ALLOCATOR
ARG TLS
ARG LIBC
ARG BUILD_CPU
ARG BUILD_LEVEL
ARG ISA_LEVEL
ARG ISA_FLAGS
ARG RECIPE_DIGEST
LABEL org.opencontainers.image.title="redis-variants/${VARIANT_NAME}" \
	org.opencontainers.image.description="Redis ${REDIS_VERSION} built by redis-variants: ${VARIANT_NAME}" \
	org.opencontainers.image.version="${REDIS_VERSION}" \
	org.opencontainers.image.source="${SOURCE_URL}" \
	org.opencontainers.image.revision="${SOURCE_SHA256}" \
	org.opencontainers.image.created="${CREATED}" \
	io.redis-variants.name="${VARIANT_NAME}" \
	io.redis-variants.id="${VARIANT_ID}" \
	io.redis-variants.kind="${VARIANT_KIND}" \
	io.redis-variants.spec="${VARIANT_SPEC}" \
	io.redis-variants.redis.version="${REDIS_VERSION}" \
	io.redis-variants.compiler="${COMPILER}" \
	io.redis-variants.compiler.version="${COMPILER_VERSION}" \
	io.redis-variants.cflags="${LABEL_CFLAGS}" \
	io.redis-variants.ldflags="${LABEL_LDFLAGS}" \
	io.redis-variants.opt="${OPT}" \
	io.redis-variants.march="${MARCH}" \
	io.redis-variants.mtune="${MTUNE}" \
	io.redis-variants.lto="${LTO}" \
	io.redis-variants.allocator="${ALLOCATOR}" \
	io.redis-variants.tls="${TLS}" \
	io.redis-variants.libc="${LIBC}" \
	io.redis-variants.source.sha256="${SOURCE_SHA256}" \
	io.redis-variants.build.cpu="${BUILD_CPU}" \
	io.redis-variants.build.x86-64-level="${BUILD_LEVEL}" \
	io.redis-variants.isa.level="${ISA_LEVEL}" \
	io.redis-variants.isa.flags="${ISA_FLAGS}" \
	io.redis-variants.recipe="${RECIPE_DIGEST}"
