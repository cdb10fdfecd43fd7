import { z } from 'zod';
import { configSchema, secretKeys } from './schema';

/*
 * The configuration reference of docs/operations.md, rendered from the schema itself: every
 * key with its type, default and meaning (its `.describe()`) comes from `configSchema`, so the
 * document cannot drift from what the loader accepts. A key added without a meaning fails
 * test/core/config/reference.test.ts.
 */

export interface ConfigKey {
  /** Dotted key, e.g. `otp.ttl_seconds`. */
  key: string;
  /** Its environment variable, e.g. `OTP__TTL_SECONDS`. */
  env: string;
  type: string;
  default: unknown;
  secret: boolean;
  meaning: string | undefined;
}

interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  default?: unknown;
  description?: string;
}

function typeOf(schema: JsonSchema): string {
  if (schema.enum) return `one of ${schema.enum.map((v) => `\`${String(v)}\``).join(', ')}`;
  // A list of objects (sms.providers) cannot be comma-separated: it is read as one JSON list.
  if (schema.type === 'array' && (schema.items?.type === undefined || schema.items.type === 'object'))
    return 'list of objects (one JSON list in the environment)';
  if (schema.type === 'array') return `list of ${schema.items?.type}s (comma-separated in the environment)`;
  if (schema.type === 'object') return 'map (one JSON object in the environment)';
  if (schema.type === 'integer' || schema.type === 'number') {
    const max = schema.maximum !== undefined && schema.maximum < Number.MAX_SAFE_INTEGER ? schema.maximum : undefined;
    if (schema.minimum !== undefined && max !== undefined) return `${schema.type} ${schema.minimum}..${max}`;
    if (schema.minimum !== undefined) return `${schema.type} >= ${schema.minimum}`;
  }
  return schema.type ?? 'value';
}

/** Every key of the configuration schema, in schema order. */
export function configKeys(): ConfigKey[] {
  const root = z.toJSONSchema(configSchema, { io: 'output', unrepresentable: 'any' }) as JsonSchema;
  const keys: ConfigKey[] = [];
  const walk = (node: JsonSchema, path: string[]) => {
    for (const [name, child] of Object.entries(node.properties ?? {})) {
      const keyPath = [...path, name];
      if (child.type === 'object' && child.properties) {
        walk(child, keyPath);
        continue;
      }
      const key = keyPath.join('.');
      keys.push({
        key,
        env: keyPath.map((p) => p.toUpperCase()).join('__'),
        type: typeOf(child),
        default: child.default,
        secret: secretKeys.some((secret) => key === secret || key.startsWith(`${secret}.`)),
        meaning: child.description,
      });
    }
  };
  walk(root, []);
  return keys;
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const shownDefault = (value: unknown) =>
  value === undefined ? '*(unset)*' : value === '' ? '*(empty)*' : `\`${JSON.stringify(value)}\``;

/** The reference as Markdown: one table per top-level section. */
export function renderConfigReference(): string {
  const bySection = new Map<string, ConfigKey[]>();
  for (const key of configKeys()) {
    const section = key.key.includes('.') ? key.key.split('.')[0]! : '(top level)';
    bySection.set(section, [...(bySection.get(section) ?? []), key]);
  }
  const out: string[] = [];
  for (const [section, keys] of bySection) {
    out.push(`### ${section === '(top level)' ? 'Top-level keys' : `\`${section}\``}`, '');
    out.push('| Key | Type | Default | Environment | Meaning |', '|---|---|---|---|---|');
    for (const key of keys) {
      const type = key.secret ? `${key.type}, **secret**` : key.type;
      out.push(
        `| \`${key.key}\` | ${cell(type)} | ${cell(shownDefault(key.default))} | \`${key.env}\` | ${cell(key.meaning ?? '')} |`,
      );
    }
    out.push('');
  }
  return out.join('\n');
}
