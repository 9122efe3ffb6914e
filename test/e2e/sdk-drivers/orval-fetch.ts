// The fetch function orval's client calls (its `override.mutator`, as orval's guide for the fetch client sets a base
// URL): the service's address and token, which the generated functions leave to their caller, and the answer as
// those functions type it, `{ data, status, headers }`. test/e2e/sdk-generators.test.ts puts it beside orval's
// output before generating it. Not in tsconfig.test.json: it is part of that client.
const settings = { baseUrl: '', token: '' };

export function configure(baseUrl: string, token: string): void {
  Object.assign(settings, { baseUrl, token });
}

export async function customFetch<T>(url: string, init: RequestInit): Promise<T> {
  const headers = new Headers(init.headers);
  headers.set('Authorization', `Bearer ${settings.token}`);
  const res = await fetch(`${settings.baseUrl}${url}`, { ...init, headers });
  const body = [204, 205, 304].includes(res.status) ? '' : await res.text();
  return { data: body ? JSON.parse(body) : {}, status: res.status, headers: res.headers } as T;
}
