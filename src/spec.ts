import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { packageRoot } from './paths';

export interface Spec {
  /** The parsed document; openapi-backend dereferences its own copy. */
  document: Record<string, unknown>;
  yaml: string;
  json: string;
}

/** Reads openapi/v1.yaml, the single source of truth, once at start-up (no per-request spec work). */
export function loadSpec(file = path.join(packageRoot(), 'openapi', 'v1.yaml')): Spec {
  const yaml = fs.readFileSync(file, 'utf8');
  const document = YAML.parse(yaml) as Record<string, unknown>;
  return { document, yaml, json: JSON.stringify(document) };
}
