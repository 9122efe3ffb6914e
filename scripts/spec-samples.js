// Requests and code samples made from openapi/v1.yaml alone, so they cannot drift from it: the docs build injects
// the samples into the page (scripts/build-docs.js, `x-codeSamples`), and the tests send the same requests and run
// the same samples against a service (test/contract/). One sampler for both: an example is what the spec says it
// is (a media type's `example`, else the schema's, else one made from its properties' examples, the first branch of
// a oneOf: what Redoc shows on the page).
'use strict';

/** The node a local `$ref` names (`#/components/schemas/Server`). */
function deref(spec, node) {
  let seen = 0;
  while (node && typeof node === 'object' && typeof node.$ref === 'string') {
    if (++seen > 20) throw new Error(`a $ref cycle at ${node.$ref}`);
    const target = node.$ref.replace(/^#\//, '').split('/').reduce((at, key) => at?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], spec);
    if (target === undefined) throw new Error(`${node.$ref} names nothing`);
    const { $ref, ...siblings } = node;
    node = { ...target, ...siblings };
  }
  return node;
}

/** The example of a schema, as the docs page shows it; undefined when the schema gives none. */
function sample(spec, schema, depth = 0) {
  const s = deref(spec, schema);
  if (!s || typeof s !== 'object' || depth > 12) return undefined;
  if (s.example !== undefined) return s.example;
  if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0];
  if (s.const !== undefined) return s.const;
  const branches = s.oneOf ?? s.anyOf;
  if (branches) return sample(spec, branches[0], depth + 1);
  if (s.properties) {
    const out = {};
    for (const [name, prop] of Object.entries(s.properties)) {
      const v = sample(spec, prop, depth + 1);
      if (v !== undefined) out[name] = v;
    }
    return out;
  }
  if (s.type === 'array' && s.items) {
    const v = sample(spec, s.items, depth + 1);
    return v === undefined ? [] : [v];
  }
  if (s.default !== undefined) return s.default;
  if (Array.isArray(s.enum)) return s.enum[0];
  return undefined;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** Every operation of the document's paths, with its parameters (the path item's, overridden by the operation's). */
function operations(spec) {
  const out = [];
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const params = new Map();
      for (const p of [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p) => deref(spec, p))) params.set(`${p.in} ${p.name}`, p);
      out.push({ path, method, op, params: [...params.values()] });
    }
  }
  return out;
}

/** A parameter's example: its own, else its schema's. */
function paramExample(spec, p) {
  if (p.example !== undefined) return p.example;
  if (p.examples) return deref(spec, Object.values(p.examples)[0]).value;
  return sample(spec, p.schema);
}

/** The body's media type and its example (the media type's own example first), or undefined without a body. */
function bodyExample(spec, op) {
  const body = deref(spec, op.requestBody);
  const media = body?.content?.['application/json'];
  if (!media) return undefined;
  if (media.example !== undefined) return media.example;
  if (media.examples) return deref(spec, Object.values(media.examples)[0]).value;
  return sample(spec, media.schema);
}

/**
 * A body that is not JSON (a file's bytes, an archive): its media type (the spec's first) and the local file a
 * sample sends. An upload sends the file its `path` names; an archive is the world import the spec describes
 * (extractServerArchive: a zip holding `MyWorld/level.dat…`). Undefined for a JSON body or none.
 */
function rawBody(spec, op, query) {
  const content = deref(spec, op.requestBody)?.content;
  if (!content || content['application/json']) return undefined;
  const type = Object.keys(content)[0];
  const file = type === 'application/zip' ? 'MyWorld.zip' : type === 'application/gzip' ? 'MyWorld.tar.gz' : String(query.path ?? 'upload.bin').split('/').pop();
  return { type, file };
}

/**
 * Parameters a sample leaves out, optional refinements: a cursor, the resume header of a stream, a download's
 * range (RFC 9110 §14.2), an upload's preconditions (RFC 9110 §13.1).
 */
const OPTIONAL = ['starting_after', 'Last-Event-ID', 'Range', 'If-Range', 'If-Match', 'If-None-Match'];

/**
 * The request the spec's examples make for an operation. `all` takes every parameter with an example (the
 * examples test); otherwise optional ones are left out where a sample reads better without them (OPTIONAL).
 * `raw`: a body that is not JSON (rawBody).
 */
function exampleRequest(spec, operation, { all = false } = {}) {
  const { path, method, op, params } = operation;
  const req = { operationId: op.operationId, method: method.toUpperCase(), template: path, path, pathParams: {}, query: {}, headers: {}, body: bodyExample(spec, op) };
  for (const p of params) {
    if (!all && !p.required && OPTIONAL.includes(p.name)) continue;
    const v = paramExample(spec, p);
    if (v === undefined) continue;
    if (p.in === 'path') {
      req.pathParams[p.name] = String(v);
      req.path = req.path.replace(`{${p.name}}`, encodeURIComponent(String(v)));
    } else if (p.in === 'query') req.query[p.name] = v;
    else if (p.in === 'header') req.headers[p.name] = String(v);
  }
  req.raw = rawBody(spec, op, req.query);
  return req;
}

/** The local file a download is written to: the name of the file or folder it reads, else a backup's. */
function downloadName(req) {
  if (req.query.path === undefined) return 'backup.tar.gz';
  const name = String(req.query.path).split('/').pop() || 'files';
  return req.query.format ? `${name}.${req.query.format}` : name;
}

/** What an operation answers with on success: an event stream, a file, nothing, or JSON. */
function answerKind(spec, op) {
  const ok = Object.entries(op.responses).find(([status]) => /^2/.test(status));
  const content = ok ? deref(spec, ok[1]).content ?? {} : {};
  if (content['text/event-stream']) return 'stream';
  if (content['application/gzip'] || content['application/zip'] || content['application/octet-stream']) return 'file';
  return Object.keys(content).length === 0 ? 'none' : 'json';
}

const IDEMPOTENCY = 'Idempotency-Key';
const query = (q) => {
  const s = new URLSearchParams(Object.entries(q).map(([k, v]) => [k, String(v)])).toString();
  return s ? `?${s}` : '';
};
const shellQuote = (s) => `'${s.replace(/'/g, `'\\''`)}'`;
const pyString = (s) => JSON.stringify(s);
const tsValue = (v) => JSON.stringify(v, null, 2).replace(/\n/g, '\n  ');

/** Python's literal for a JSON value (True/False/None), indented as it nests. */
function pyValue(v, indent = '') {
  if (v === null) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (Array.isArray(v)) return v.length === 0 ? '[]' : `[${v.map((x) => pyValue(x, indent)).join(', ')}]`;
  if (typeof v === 'object') {
    const inner = `${indent}    `;
    const entries = Object.entries(v).map(([k, x]) => `${inner}${JSON.stringify(k)}: ${pyValue(x, inner)},`);
    return entries.length === 0 ? '{}' : `{\n${entries.join('\n')}\n${indent}}`;
  }
  return JSON.stringify(v);
}

function curlSample(req, kind, base) {
  const lines = [`curl -sS${kind === 'stream' ? 'N' : ''}${req.method === 'GET' ? '' : ` -X ${req.method}`} ${shellQuote(base + req.path + query(req.query))}`];
  lines.push('-H "Authorization: Bearer $GSH_TOKEN"');
  // A new Idempotency-Key per request (the same key with another request is a 422), as the README's curl does.
  for (const [k, v] of Object.entries(req.headers)) lines.push(k === IDEMPOTENCY ? `-H "${k}: $(uuidgen 2>/dev/null || date +%s%N)"` : `-H ${shellQuote(`${k}: ${v}`)}`);
  if (req.body !== undefined) lines.push(`-H 'Content-Type: application/json'`, `-d ${shellQuote(JSON.stringify(req.body))}`);
  // The file's bytes as they are; curl sets the Content-Length.
  if (req.raw) lines.push(`-H ${shellQuote(`Content-Type: ${req.raw.type}`)}`, `--data-binary ${shellQuote(`@${req.raw.file}`)}`);
  if (kind === 'file') lines.push(`-o ${shellQuote(downloadName(req))}`);
  return lines.join(' \\\n  ');
}

function tsSample(req, kind, base) {
  const params = [];
  if (Object.keys(req.pathParams).length) params.push(`path: ${JSON.stringify(req.pathParams)}`);
  if (Object.keys(req.query).length) params.push(`query: ${JSON.stringify(req.query)}`);
  if (Object.keys(req.headers).length) {
    const header = Object.entries(req.headers).map(([k, v]) => `${JSON.stringify(k)}: ${k === IDEMPOTENCY ? 'crypto.randomUUID()' : JSON.stringify(v)}`);
    params.push(`header: { ${header.join(', ')} }`);
  }
  const opts = [];
  if (params.length) opts.push(`params: { ${params.join(', ')} }`);
  if (req.body !== undefined) opts.push(`body: ${tsValue(req.body)}`);
  if (req.raw) {
    opts.push(`// The file's bytes as they are (the types call a binary body a string).\n  body: readFileSync('${req.raw.file}') as unknown as string`, 'bodySerializer: (body) => body', `headers: { 'Content-Type': '${req.raw.type}' }`);
  }
  if (kind === 'stream') opts.push("parseAs: 'stream'");
  if (kind === 'file') opts.push("parseAs: 'arrayBuffer'");
  const call = `await client.${req.method}('${req.template}'${opts.length ? `, {\n  ${opts.join(',\n  ')},\n}` : ''})`;
  const lines = [
    ...(req.raw ? ["import { readFileSync } from 'node:fs';"] : []),
    "import createClient from 'openapi-fetch';",
    "import type { paths } from './v1'; // npx openapi-typescript <the service>/openapi.yaml -o v1.ts",
    '',
    `const client = createClient<paths>({ baseUrl: '${base}', headers: { Authorization: \`Bearer \${process.env.GSH_TOKEN}\` } });`,
  ];
  if (kind === 'stream') {
    lines.push(`const { data, error, response } = ${call};`,
      'if (!data) throw new Error(`${response.status}: ${JSON.stringify(error)}`);',
      '// Server-Sent Events: blocks of event:, id: and data: lines; each data line is one event as JSON.',
      'const reader = data.pipeThrough(new TextDecoderStream()).getReader();',
      'for (let r = await reader.read(); !r.done; r = await reader.read()) process.stdout.write(r.value);');
  } else if (kind === 'file') {
    lines.push(`const { data, error, response } = ${call};`, `if (data) (await import('node:fs')).writeFileSync('${downloadName(req)}', Buffer.from(data));`, 'console.log(response.status, data ? `${data.byteLength} bytes` : error);');
  } else {
    lines.push(`const { data, error, response } = ${call};`, 'console.log(response.status, data ?? error);');
  }
  return lines.join('\n');
}

function pySample(req, kind, base) {
  const headers = Object.entries(req.headers).map(([k, v]) => `, ${pyString(k)}: ${k === IDEMPOTENCY ? 'str(uuid.uuid4())' : pyString(v)}`);
  if (req.raw) headers.push(`, "Content-Type": ${pyString(req.raw.type)}`);
  const args = [`    ${pyString(base + req.path)},`, `    headers={"Authorization": f"Bearer {os.environ['GSH_TOKEN']}"${headers.join('')}},`];
  // Query values as the URL has them: requests would send Python's True as "True".
  if (Object.keys(req.query).length) args.push(`    params=${pyValue(Object.fromEntries(Object.entries(req.query).map(([k, v]) => [k, String(v)])), '    ')},`);
  if (req.body !== undefined) args.push(`    json=${pyValue(req.body, '    ')},`);
  // The open file, streamed as it is; requests sets the Content-Length from its size.
  if (req.raw) args.push('    data=body,');
  if (kind === 'stream') args.push('    stream=True,');
  const imports = req.headers[IDEMPOTENCY] === undefined ? ['import os'] : ['import os', 'import uuid'];
  const call = [`response = requests.${req.method.toLowerCase()}(`, ...args, ')'];
  const lines = [...imports, '', 'import requests', '', ...(req.raw ? [`with open(${pyString(req.raw.file)}, "rb") as body:`, ...call.join('\n').split('\n').map((l) => `    ${l}`)] : call)];
  if (kind === 'stream') {
    lines.push('# Server-Sent Events: blocks of event:, id: and data: lines; each data line is one event as JSON.', 'for line in response.iter_lines(decode_unicode=True):', '    print(line)');
  } else if (kind === 'file') {
    lines.push('if response.ok:', `    with open(${pyString(downloadName(req))}, "wb") as f:`, '        f.write(response.content)', 'print(response.status_code, len(response.content))');
  } else {
    lines.push('print(response.status_code, response.text)');
  }
  return lines.join('\n');
}

/** The code samples of one operation: curl, TypeScript (openapi-fetch on openapi-typescript's types), Python (requests). */
function codeSamples(spec, operation, base) {
  const req = exampleRequest(spec, operation);
  const kind = answerKind(spec, operation.op);
  return [
    { lang: 'Shell', label: 'curl', source: curlSample(req, kind, base) },
    { lang: 'TypeScript', label: 'TypeScript', source: tsSample(req, kind, base) },
    { lang: 'Python', label: 'Python', source: pySample(req, kind, base) },
  ];
}

module.exports = { deref, sample, operations, exampleRequest, answerKind, codeSamples };
