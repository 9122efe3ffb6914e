import type { OpenAPIBackend } from 'openapi-backend';
import addFormats from 'ajv-formats';
import type { Spec } from '../spec';

/**
 * openapi-backend built from the spec: its router (which operation a request is, and its parse) and its Ajv
 * request validators, both used through the library's public interface only (dispatch.ts). Immutable once built,
 * so one can serve any number of apps (a jest worker builds it once for all its files, test/helpers/app.ts).
 *
 * - `quick: true`: the document is dereferenced synchronously and no validator is compiled by init(). It also
 *   skips openapi-backend's definition check, which validates against the OpenAPI 3.0 meta-schema and so refuses
 *   3.1 (`type: [string, "null"]`); `redocly lint` (recommended-strict) is our definition check.
 * - `precompile`: every operation's request validators are compiled now (about 0.1 s with the patch; response
 *   validators, which nothing here uses, never are), so no first request pays for them and a schema Ajv cannot
 *   compile stops the start. Without it (the tests, which use a few operations per file), each operation's
 *   validators are compiled by its first request; test/unit/openapi.test.ts compiles them all
 *   (docs/conventions.md "Routing and validation").
 * - `coerceTypes: true`: the query and path values the handler gets are the ones Ajv checked and coerced
 *   (`validateRequest(…).coerced`).
 * - Ajv: every error, not the first (`allErrors`), and the formats of ajv-formats beside openapi-backend's own.
 *
 * Where openapi-backend itself was slow per request or per compile, it is patched (patches/, applied at install;
 * BENCHMARKS.md §1). The library is loaded here, by the first build: a jest worker's later test files share the
 * one built and never load it (docs/conventions.md "Tests").
 */
export async function createOpenApi(spec: Spec, options: { precompile?: boolean } = {}): Promise<OpenApi> {
  const { OpenAPIBackend } = await import('openapi-backend');
  const api = new OpenAPIBackend({
    definition: structuredClone(spec.document) as never,
    strict: true,
    quick: true,
    coerceTypes: true,
    ajvOpts: { allErrors: true, strict: false },
    customizeAjv: (ajv) => {
      addFormats(ajv);
      return ajv;
    },
  });
  await api.init();
  if (options.precompile) api.validator.preCompileRequestValidators();
  return api;
}

export type OpenApi = OpenAPIBackend;
