# batch-scheduler image: build with  docker build -t batch-scheduler:0.1.0 .
# (the tag is the version in pyproject.toml; manifests/07-deployment.yaml uses it).
#
# Stage 1 builds the project's wheel and installs it with its runtime dependencies into a
# virtual environment; stage 2 is a fresh slim Python with only that environment, no build
# tools, no pip, no caches, running as a numeric non-root user.

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS builder
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY scheduler ./scheduler
RUN python -m pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .
RUN python -m venv /opt/batch-scheduler \
 && /opt/batch-scheduler/bin/python -m pip install --no-cache-dir /wheels/batch_scheduler-*.whl \
 && /opt/batch-scheduler/bin/python -m pip uninstall --yes pip setuptools wheel

FROM ${PYTHON_IMAGE} AS runtime
# The base image's own pip/setuptools/wheel are build tools: not needed at run time.
RUN python -m pip uninstall --yes pip setuptools wheel \
 && rm -rf /root/.cache
COPY --from=builder /opt/batch-scheduler /opt/batch-scheduler
ENV PATH=/opt/batch-scheduler/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
# 65532: the conventional "nonroot" UID/GID; the Deployment's securityContext uses it too.
USER 65532:65532
# /metrics, /healthz, /readyz (run --metrics-addr=0.0.0.0:10259 in manifests/07-deployment.yaml)
EXPOSE 10259
ENTRYPOINT ["batch-scheduler"]
CMD ["run"]
