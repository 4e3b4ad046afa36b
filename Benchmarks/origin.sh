# Sourced by the benchmark scripts: a local nginx origin on 127.0.0.1:$1 serving 1k.bin and
# 1m.bin from $2/www with `Cache-Control: $3`, plus any server-block lines in $4, on CPU 0
# (shared with the proxy, as ../shared/bench does). Its pid goes to $2/nginx.pid.
start_origin() {
  local port=$1 work=$2 control=$3 extra=${4:-}
  mkdir -p "$work/www" "$work/logs"
  chmod 755 "$work" "$work/www"
  head -c 1024 /dev/urandom > "$work/www/1k.bin"
  head -c 1048576 /dev/urandom > "$work/www/1m.bin"
  chmod 644 "$work/www/"*
  cat > "$work/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $work/nginx.pid;
error_log $work/logs/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$port;
    root $work/www;
    add_header Cache-Control "$control";
    $extra
  }
}
CONF
  taskset -c 0 nginx -p "$work" -c "$work/nginx.conf" &
}

# Installs wrk and nginx-light when missing.
need_wrk_nginx() {
  command -v wrk >/dev/null && command -v nginx >/dev/null && return
  local s=(); [ "$(id -u)" -eq 0 ] || s=(sudo)
  "${s[@]}" apt-get update -qq && "${s[@]}" apt-get install -y -qq wrk nginx-light >/dev/null
}
