// The helper lives with the drill (scripts/lib/prometheus.ts), which starts Prometheus the same way.
export { promtool, startPrometheus, type PrometheusServer } from '../../scripts/lib/prometheus';
