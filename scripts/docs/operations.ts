import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderConfigReference } from '../../src/core/config/reference';
import { metricDefinitions, METRIC_PREFIX } from '../../src/core/metrics';
import type { DocGenerator } from './generator';

/*
 * docs/operations.md: hand-written prose from operations.template.md, with the metrics table
 * and the configuration reference rendered from the code that defines them.
 */

const TEMPLATE = join(__dirname, 'operations.template.md');

function renderMetrics(): string {
  const rows = metricDefinitions.map(
    (m) =>
      `| \`${m.name}\` | ${m.type} | ${m.labels.length > 0 ? m.labels.map((l) => `\`${l}\``).join(', ') : '-'} | ${m.help} |`,
  );
  return [
    '| Metric | Type | Labels | Meaning |',
    '|---|---|---|---|',
    ...rows,
    '',
    `Besides these, prom-client's default process metrics are exported with the \`${METRIC_PREFIX}\` prefix (\`${METRIC_PREFIX}process_cpu_seconds_total\`, \`${METRIC_PREFIX}process_resident_memory_bytes\`, \`${METRIC_PREFIX}nodejs_eventloop_lag_seconds\`, \`${METRIC_PREFIX}nodejs_heap_size_used_bytes\`, ...).`,
  ].join('\n');
}

function renderOperations(template: string = readFileSync(TEMPLATE, 'utf8')): string {
  const parts: Record<string, () => string> = {
    '{{METRICS}}': renderMetrics,
    '{{CONFIG_REFERENCE}}': renderConfigReference,
  };
  let out = template;
  for (const [placeholder, render] of Object.entries(parts)) {
    if (!out.includes(placeholder)) throw new Error(`operations.template.md lost its ${placeholder} placeholder`);
    out = out.replace(placeholder, () => render().trimEnd());
  }
  return out;
}

export const operationsDoc: DocGenerator = {
  path: 'docs/operations.md',
  render: () => renderOperations(),
};
