import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

type OpenApiDocument = {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>>;
  webhooks?: Record<string, unknown>;
};

const pointer = (...parts: string[]) => parts.map((p) => "/" + p.replace(/~/g, "~0").replace(/\//g, "~1")).join("");

/**
 * The service's own /openapi.json, used to check every response a test sees: the status must be
 * documented for the operation, and a JSON body must validate against the documented schema.
 */
export class Contract {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly templates: Array<{ template: string; regex: RegExp; literalLength: number }>;
  /** Operations seen by tests, as `METHOD /template`. */
  readonly seen = new Set<string>();

  constructor(readonly document: OpenApiDocument) {
    addFormats(this.ajv);
    this.ajv.addSchema(document as object, "contract");
    this.templates = Object.keys(document.paths)
      .map((template) => ({
        template,
        regex: new RegExp("^" + template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{[^}]+\\?\}/g, "[^/]+") + "$"),
        literalLength: template.replace(/\{[^}]+\}/g, "").length,
      }))
      // Prefer the most literal match: /v1/numbers/attach before /v1/numbers/{number_id}.
      .sort((a, b) => b.literalLength - a.literalLength);
  }

  static async load(baseUrl: string): Promise<Contract> {
    const res = await fetch(baseUrl + "/openapi.json");
    if (!res.ok) throw new Error(`/openapi.json answered ${res.status}: ${await res.text()}`);
    return new Contract((await res.json()) as OpenApiDocument);
  }

  /** Throws with a readable message when a response does not match the contract. */
  check(method: string, path: string, status: number, contentType: string | null, body: unknown): void {
    const m = method.toLowerCase();
    // express routes are not strict about one trailing slash, and neither is the contract.
    if (path.length > 1) path = path.replace(/\/$/, "");
    const match = this.templates.find((t) => t.regex.test(path) && this.document.paths[t.template]![m]);
    if (!match) {
      // No such route: a 404 problem, or a 405 problem when the path takes other methods.
      const pathKnown = this.templates.some((t) => t.regex.test(path));
      if (status !== (pathKnown ? 405 : 404)) throw new Error(`${method} ${path} is not in /openapi.json but answered ${status}`);
      this.validate(`${method} ${path} (unknown route)`, "#/components/schemas/Problem", body);
      return;
    }
    this.seen.add(`${method.toUpperCase()} ${match.template}`);
    const responses = this.document.paths[match.template]![m]!.responses;
    const key = String(status) in responses ? String(status) : status >= 500 && "default" in responses ? "default" : undefined;
    if (!key)
      throw new Error(
        `${method} ${match.template} answered ${status}, which /openapi.json does not document (documented: ${Object.keys(responses).join(", ")})`,
      );
    const content = responses[key]!.content;
    if (!content) return;
    const mediaType = (contentType ?? "").split(";")[0]!.trim();
    if (!(mediaType in content)) {
      throw new Error(`${method} ${match.template} ${status} answered ${mediaType}; documented: ${Object.keys(content).join(", ")}`);
    }
    this.validate(`${method} ${match.template} ${status}`, "#" + pointer("paths", match.template, m, "responses", key, "content", mediaType, "schema"), body);
  }

  /** Throws unless a body the service POSTed to a webhook matches the document's `webhooks` entry. */
  checkWebhook(name: string, body: unknown): void {
    if (!this.document.webhooks?.[name]) throw new Error(`/openapi.json has no webhook ${name}`);
    this.validate(`webhook ${name}`, "#" + pointer("webhooks", name, "post", "requestBody", "content", "application/json", "schema"), body);
  }

  private validate(label: string, ref: string, body: unknown): void {
    let validate = this.compiled.get(ref);
    if (!validate) {
      validate = this.ajv.compile({ $ref: "contract" + ref });
      this.compiled.set(ref, validate);
    }
    if (!validate(body)) {
      throw new Error(`${label}: body does not match /openapi.json: ${this.ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 2000)}`);
    }
  }
}
