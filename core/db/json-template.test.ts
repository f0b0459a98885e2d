import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatLiteral, hole, jsonTemplate } from "./json-template.js";

describe("jsonTemplate", () => {
  it("writes any JSON value as JSON.stringify does, with its % doubled", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(jsonTemplate(value)).toBe(formatLiteral(JSON.stringify(value)));
      }),
    );
  });

  it("writes a hole as format()'s numbered argument, wherever it stands", () => {
    expect(jsonTemplate({ a: hole(1), b: [hole(2), "50%"], c: { d: hole(10) } })).toBe('{"a":%1$s,"b":[%2$s,"50%%"],"c":{"d":%10$s}}');
  });

  it("never takes a string for a hole, even one written like its argument", () => {
    expect(jsonTemplate({ a: "%1$s" })).toBe('{"a":"%%1$s"}');
  });
});
