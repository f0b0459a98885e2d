import { Contract } from "./contract.js";

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  /** Sent as JSON unless `raw` is given. */
  body?: unknown;
  /** Sent as is, with `contentType` (default application/json). */
  raw?: string | Buffer;
  contentType?: string;
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
  /** Overrides the client's key for this request; null sends no Authorization header. */
  key?: string | null;
  /** Skip the contract check (for deliberately odd requests whose answer is checked by hand). */
  unchecked?: boolean;
}

const contracts = new Map<string, Promise<Contract>>();

/**
 * A small HTTP client for tests. Every response it sees is checked against the service's own
 * /openapi.json, so the whole suite doubles as a conformance test of the contract.
 */
export class Api {
  constructor(
    readonly baseUrl: string,
    readonly key?: string,
  ) {}

  withKey(key: string | undefined): Api {
    return new Api(this.baseUrl, key);
  }

  contract(): Promise<Contract> {
    if (!contracts.has(this.baseUrl)) contracts.set(this.baseUrl, Contract.load(this.baseUrl));
    return contracts.get(this.baseUrl)!;
  }

  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const url = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { ...options.headers };
    const key = options.key === undefined ? this.key : options.key;
    if (key) headers.authorization = `Bearer ${key}`;
    let body: string | Buffer | undefined;
    if (options.raw !== undefined) {
      body = options.raw;
      headers["content-type"] ??= options.contentType ?? "application/json";
    } else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers["content-type"] ??= "application/json";
    }
    const res = await fetch(url, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    if (/json/.test(res.headers.get("content-type") ?? "")) parsed = text ? JSON.parse(text) : undefined;
    if (!options.unchecked) (await this.contract()).check(method, url.pathname, res.status, res.headers.get("content-type"), parsed);
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  }

  get<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>("GET", path, options);
  }
  post<T = any>(path: string, body?: unknown, options?: RequestOptions) {
    return this.request<T>("POST", path, { ...options, body });
  }
  patch<T = any>(path: string, body?: unknown, options?: RequestOptions) {
    return this.request<T>("PATCH", path, { ...options, body });
  }
  delete<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>("DELETE", path, options);
  }
}
