import type { ApiError } from './api-types.js';

/** An API answer that is not 200: its one-line message, what to do, and whether compare may be forced. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly body: ApiError,
  ) {
    super(body.error);
  }
}

export async function getJson<T>(path: string): Promise<T> {
  const res = await fetch(path, { headers: { accept: 'application/json' } });
  const body = (await res.json().catch(() => ({ error: `HTTP ${res.status}` }))) as unknown;
  if (!res.ok) throw new ApiFailure(res.status, body as ApiError);
  return body as T;
}
