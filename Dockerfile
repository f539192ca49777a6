# MedCite production image: gunicorn + uvicorn workers (ASGI) with WhiteNoise static files.
FROM python:3.11-slim AS base

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    TOKENIZERS_PARALLELISM=false

RUN apt-get update \
    && apt-get install -y --no-install-recommends libpq5 curl \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY pyproject.toml README.md constraints.txt ./
COPY config ./config
COPY evidence ./evidence
COPY pubmed ./pubmed
COPY trials ./trials
COPY chat ./chat
COPY research ./research
# The CPU build of torch: the default wheel would pull several GB of CUDA libraries.
RUN pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu \
    && pip install -c constraints.txt .
# EMBEDDING_GPU=1 builds the GPU embedding worker's image (docker-compose.gpu.yml): ONNX Runtime with its
# CUDA provider in place of the CPU build (the NVIDIA runtime supplies the driver; the wheel brings CUDA 12).
ARG EMBEDDING_GPU=0
RUN if [ "$EMBEDDING_GPU" = "1" ]; then \
        pip uninstall -y onnxruntime && pip install "onnxruntime-gpu[cuda,cudnn]>=1.20,<2"; \
    fi
COPY manage.py ./
COPY templates ./templates
COPY static ./static

RUN useradd --create-home --uid 10001 medcite && mkdir -p /app/var && chown medcite /app/var
USER medcite
RUN DJANGO_DEBUG=0 SECRET_KEY=collectstatic-only-not-a-real-secret-key-0123456789abcdef \
    ALLOWED_HOSTS=localhost DATABASE_URL=postgres://unused@localhost/unused \
    python manage.py collectstatic --noinput

EXPOSE 8000
CMD ["gunicorn", "config.asgi:application", "-k", "uvicorn_worker.UvicornWorker", \
     "--bind", "0.0.0.0:8000", "--workers", "2", "--timeout", "120", "--access-logfile", "-"]
