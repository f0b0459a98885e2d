import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";
import { projectRoot } from "../process.js";

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => void;

type Schema = Record<string, any>;
type OperationObject = { operationId: string; parameters?: Schema[]; requestBody?: Schema; responses: Record<string, Schema> };
type Document = { paths: Record<string, Record<string, OperationObject>>; components: Schema };

/**
 * Twilio's own OpenAPI description of its 2010 API, read where the project keeps it beside the
 * repository: `TWILIO_OPENAPI`, then `../shared/twilio/`, then `/work/shared/twilio/`. Missing,
 * the tests that need it fail with this message: they are never skipped.
 */
export function twilioOpenApiPath(
  candidates: Array<string | undefined> = [
    process.env.TWILIO_OPENAPI,
    join(projectRoot, "..", "shared", "twilio", "twilio_api_v2010.json"),
    "/work/shared/twilio/twilio_api_v2010.json",
  ],
): string {
  const found = candidates.find((path): path is string => path !== undefined && path !== "" && existsSync(path));
  if (!found) {
    throw new Error(
      `Twilio's OpenAPI document (twilio_api_v2010.json) was not found; looked at: ${candidates.filter(Boolean).join(", ")}. Set TWILIO_OPENAPI to its path.`,
    );
  }
  return found;
}

/** One request as the stand-in received it. */
export interface RestRequest {
  method: string;
  /** The path, from `/2010-04-01/...`. */
  path: string;
  query: Record<string, string | string[]>;
  form: Record<string, string | string[]>;
}

/** A request that matched an operation of the document: which one, and its path parameters. */
export interface MatchedOperation {
  operationId: string;
  template: string;
  params: Record<string, string>;
}

const PHONE = /^\+[1-9]\d{1,14}$/;

/**
 * Checks requests against Twilio's document exactly as far as it goes: the path and method must
 * be an operation; path parameters, query parameters and form fields must be named in it, the
 * required ones present, and every value of the declared type, enum and format (Twilio's own
 * formats included: `endpoint`, `phone-number`, `twiml`, `http-method`, `iso-country-code`).
 * Also checks the stand-in's own answers against the response schemas.
 */
export class TwilioOpenApi {
  private readonly document: Document;
  private readonly ajv = new Ajv({ strict: false, allErrors: true, coerceTypes: "array", validateFormats: true });
  // Twilio's own examples break some of its formats in answers (relative `uri`s, "(415) 555-0100"
  // as a `phone-number`): answers are checked for shape, types, enums and patterns only.
  private readonly answers = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly templates: Array<{ template: string; regex: RegExp; literal: number }>;

  constructor(path = twilioOpenApiPath()) {
    this.document = JSON.parse(readFileSync(path, "utf8")) as Document;
    untypedNullables(this.document);
    addFormats(this.ajv);
    this.ajv.addFormat("endpoint", (v: string) => PHONE.test(v) || /^(sip|client):\S+$/.test(v));
    this.ajv.addFormat("phone-number", (v: string) => PHONE.test(v));
    this.ajv.addFormat("http-method", /^(GET|POST|PUT|DELETE|HEAD|PATCH)$/);
    this.ajv.addFormat("iso-country-code", /^[A-Z]{2}$/);
    this.ajv.addFormat("twiml", (v: string) => /^<\?xml version="1\.0" encoding="UTF-8"\?><Response(\/>|>[\s\S]*<\/Response>)$/.test(v));
    this.ajv.addFormat("date-time-rfc-2822", /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} [+-]\d{4}$/);
    for (const loose of ["currency", "uri-map", "phone-number-capabilities", "sid"]) this.ajv.addFormat(loose, () => true);
    this.ajv.addSchema(this.document as object, "twilio");
    this.answers.addSchema(this.document as object, "twilio");
    this.templates = Object.keys(this.document.paths)
      .map((template) => ({
        template,
        regex: new RegExp("^" + template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{(\w+)\\?\}/g, "(?<$1>[^/]+)") + "$"),
        literal: template.replace(/\{[^}]+\}/g, "").length,
      }))
      // The most literal template first: IncomingPhoneNumbers/Local.json before IncomingPhoneNumbers/{Sid}.json.
      .sort((a, b) => b.literal - a.literal);
  }

  /** The operation a request is, or the list of everything wrong with it. */
  check(request: RestRequest): MatchedOperation | { problems: string[] } {
    const method = request.method.toLowerCase();
    const match = this.templates.map((t) => ({ t, m: t.regex.exec(request.path) })).find(({ t, m }) => m && this.document.paths[t.template]![method]);
    if (!match) return { problems: [`${request.method} ${request.path} is not an operation of Twilio's API`] };
    const template = match.t.template;
    const operation = this.document.paths[template]![method]!;
    const params = Object.fromEntries(Object.entries(match.m!.groups ?? {}).map(([k, v]) => [k, decodeURIComponent(v)]));
    const problems: string[] = [];
    const pointer = (...parts: Array<string | number>) =>
      "twilio#/" + ["paths", template, method, ...parts].map((p) => String(p).replace(/~/g, "~0").replace(/\//g, "~1")).join("/");
    const declared = (where: "path" | "query") => (operation.parameters ?? []).map((p, i) => ({ p, i })).filter(({ p }) => p.in === where);
    for (const [where, values] of [
      ["path", params],
      ["query", request.query],
    ] as const) {
      const known = declared(where);
      for (const name of Object.keys(values)) if (!known.some(({ p }) => p.name === name)) problems.push(`${where} parameter ${name} is not in the document`);
      const schema = {
        type: "object",
        properties: Object.fromEntries(known.map(({ p, i }) => [p.name, { $ref: pointer("parameters", i, "schema") }])),
        required: known.filter(({ p }) => p.required).map(({ p }) => p.name),
      };
      problems.push(...this.validate(`${template} ${method} ${where}`, schema, structuredClone(values), where));
    }
    const body = operation.requestBody?.content?.["application/x-www-form-urlencoded"]?.schema as Schema | undefined;
    if (!body && Object.keys(request.form).length > 0) problems.push(`${request.method} ${template} takes no body`);
    if (body) {
      for (const name of Object.keys(request.form)) if (!(name in (body.properties ?? {}))) problems.push(`form field ${name} is not in the document`);
      const base = pointer("requestBody", "content", "application/x-www-form-urlencoded", "schema");
      const schema = {
        type: "object",
        properties: Object.fromEntries(Object.keys(body.properties ?? {}).map((name) => [name, { $ref: `${base}/properties/${name}` }])),
        required: body.required ?? [],
      };
      problems.push(...this.validate(`${template} ${method} body`, schema, structuredClone(request.form), "form"));
    }
    return problems.length > 0 ? { problems } : { operationId: operation.operationId, template, params };
  }

  /** Throws when an answer the stand-in gives does not match the documented response. */
  checkResponse(operation: MatchedOperation, method: string, status: number, body: unknown): void {
    const response = this.document.paths[operation.template]![method.toLowerCase()]!.responses[String(status)];
    if (!response) throw new Error(`stand-in answered ${operation.operationId} with ${status}, which Twilio's document does not list`);
    const content = response.content?.["application/json"];
    if (!content) return;
    const ref =
      "twilio#/" +
      ["paths", operation.template, method.toLowerCase(), "responses", String(status), "content", "application/json", "schema"]
        .map((p) => p.replace(/~/g, "~0").replace(/\//g, "~1"))
        .join("/");
    const problems = this.validate(ref, { $ref: ref }, body, "response", this.answers);
    if (problems.length > 0) throw new Error(`stand-in answer to ${operation.operationId} does not match Twilio's document: ${problems.join("; ")}`);
  }

  /** The property names of a component schema (to build complete resources). */
  propertiesOf(component: string): string[] {
    return Object.keys(this.document.components.schemas[component]?.properties ?? {});
  }

  private validate(key: string, schema: Schema, data: unknown, label: string, ajv = this.ajv): string[] {
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = ajv.compile(schema);
      this.compiled.set(key, validate);
    }
    if (validate(data)) return [];
    return (validate.errors ?? []).map(
      (e) => `${label}${e.instancePath} ${e.message}${e.params && "missingProperty" in e.params ? ` (${String(e.params.missingProperty)})` : ""}`,
    );
  }
}

/**
 * Drops `nullable` where the document gives no `type` (a call recording's `encryption_details`):
 * Ajv refuses to compile such a schema, and with no type any value, null included, is allowed anyway.
 */
function untypedNullables(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) untypedNullables(item);
    return;
  }
  if (node === null || typeof node !== "object") return;
  const schema = node as Record<string, unknown>;
  if (schema.nullable === true && schema.type === undefined && schema.$ref === undefined) delete schema.nullable;
  for (const value of Object.values(schema)) untypedNullables(value);
}
