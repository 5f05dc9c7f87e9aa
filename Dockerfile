# One image for migrate, gateway, worker and dashboard (see docker-compose.yml).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /lab

COPY . .
# Editable, as on a learner's machine: alembic.ini and migrations/ stay next to the trees.
RUN pip install --no-cache-dir -e .

# 3001: gunicorn (deploy/gunicorn.conf.py, behind nginx); 5000: the dashboard.
EXPOSE 3001 5000
CMD ["python", "-m", "solution"]
