import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { packageRoot } from './paths';

export interface Spec {
  /** The parsed document; openapi-backend dereferences its own copy. */
  document: Record<string, unknown>;
  yaml: string;
  json: string;
}

/**
 * Reads openapi/v1.yaml, the single source of truth, once at start-up (no per-request spec work). The document
 * comes from generated/v1.json (`npm run generate`, scripts/spec-json.js) when that file was made from exactly
 * this YAML, since parsing the YAML costs 0.5–1 s of CPU and the JSON milliseconds; otherwise from the YAML.
 */
export function loadSpec(file = path.join(packageRoot(), 'openapi', 'v1.yaml')): Spec {
  const yaml = fs.readFileSync(file, 'utf8');
  const generated = path.join(path.dirname(file), '..', 'generated', `${path.basename(file, '.yaml')}.json`);
  // The yaml package is loaded only here: evaluating it costs about 7 ms per start, which most starts need not pay.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded lazily, as said above
  const document = parsedBefore(yaml, generated) ?? ((require('yaml') as typeof import('yaml')).parse(yaml) as Record<string, unknown>);
  return { document, yaml, json: JSON.stringify(document) };
}

/** The document generated/ holds for this YAML, or undefined when there is none or it was made from other YAML. */
function parsedBefore(yaml: string, generated: string): Record<string, unknown> | undefined {
  let parsed: { source_sha256?: string; document?: Record<string, unknown> };
  try {
    parsed = JSON.parse(fs.readFileSync(generated, 'utf8')) as typeof parsed;
  } catch {
    return undefined; // none, or not whole: the YAML is the source anyway
  }
  const sha256 = crypto.createHash('sha256').update(yaml).digest('hex');
  return parsed.source_sha256 === sha256 ? parsed.document : undefined;
}
