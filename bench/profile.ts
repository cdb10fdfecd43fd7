import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

/*
 * Top self-time functions of a V8 CPU profile (`node --cpu-prof`), for `npm run bench --
 * --profile <dir>` and docs/performance.md. Self time per function is the sum of the sampling
 * intervals whose sample landed in it; `(idle)` is left out of the total (waiting is not work).
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface HotFunction {
  name: string;
  /** Self time in ms. */
  selfMs: number;
  /** Share of the busy (non-idle) time. */
  share: number;
}

const ROOT = `${relative('/', process.cwd())}/`;

function where(url: string, line: number): string {
  if (!url) return '';
  let path = url.replace(/^file:\/\//, '').replace(/^\//, '');
  const modules = path.lastIndexOf('node_modules/');
  if (modules !== -1) path = path.slice(modules + 'node_modules/'.length);
  else if (path.startsWith(ROOT)) path = path.slice(ROOT.length);
  return `${path}:${line + 1}`;
}

/**
 * Where a function lives: its package, its file of this repository, or the Node module. Native
 * functions (a `writev`, an HMAC) count for the nearest caller that has a source.
 */
function componentOf(url: string): string {
  const path = url.replace(/^file:\/\//, '');
  const modules = path.lastIndexOf('/node_modules/');
  if (modules !== -1) {
    const [scope, name] = path.slice(modules + '/node_modules/'.length).split('/');
    return scope!.startsWith('@') ? `${scope}/${name}` : scope!;
  }
  if (path.startsWith('node:')) return path.replace(/^node:(internal\/)?/, 'node:').split('/')[0]!;
  return path.startsWith(`/${ROOT}`) ? path.slice(ROOT.length + 1) : path;
}

export function hotFunctions(
  profile: CpuProfile,
  top = 15,
): { busyMs: number; functions: HotFunction[]; components: HotFunction[] } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const self = new Map<string, number>();
  const byComponent = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    const delta = profile.timeDeltas[i] ?? 0;
    if (!node || node.callFrame.functionName === '(idle)') return;
    const { functionName, url, lineNumber } = node.callFrame;
    const name = `${functionName || '(anonymous)'} ${where(url, lineNumber)}`.trim();
    self.set(name, (self.get(name) ?? 0) + delta);
    let owner: ProfileNode | undefined = node;
    while (owner && !owner.callFrame.url) owner = byId.get(parent.get(owner.id) ?? -1);
    const component = owner ? componentOf(owner.callFrame.url) : functionName || '(native)';
    byComponent.set(component, (byComponent.get(component) ?? 0) + delta);
    busy += delta;
  });
  const rank = (totals: Map<string, number>) =>
    [...totals.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, micros]) => ({ name, selfMs: micros / 1000, share: busy > 0 ? micros / busy : 0 }));
  return { busyMs: busy / 1000, functions: rank(self), components: rank(byComponent) };
}

export function formatHotFunctions(file: string, top = 12): string {
  const { busyMs, functions, components } = hotFunctions(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, top);
  const line = (f: HotFunction) =>
    `  ${(f.share * 100).toFixed(1).padStart(5)}%  ${f.selfMs.toFixed(0).padStart(6)} ms  ${f.name}`;
  return [
    `${file}: ${busyMs.toFixed(0)} ms busy`,
    ' self time by component (package, file of this repository, Node module; native code counts for its caller):',
    ...components.map(line),
    ' top functions by self time:',
    ...functions.map(line),
  ].join('\n');
}
