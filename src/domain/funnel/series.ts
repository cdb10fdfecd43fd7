import type { Metrics } from '../../core/metrics';
import { diagramTrail, funnelDiagrams, stepLabel } from './counting';

/**
 * The funnel's series at 0 from start: each journey of /flows with each screen on its diagram,
 * the labels src/domain/funnel/counting.ts counts under. A journey's first request then moves its rate.
 */
export async function declareFunnelSeries(metrics: Pick<Metrics, 'declareFunnel'>): Promise<void> {
  const screens: Array<{ journey: string; step: string }> = [];
  for (const diagram of await funnelDiagrams()) {
    const steps = new Set([...diagramTrail(diagram), ...diagram.screens.map((screen) => stepLabel(screen.state))]);
    for (const step of steps) screens.push({ journey: diagram.id, step });
  }
  metrics.declareFunnel(screens);
}
