import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { getPackageDetailsFromPatchFilename } from "patch-package/dist/PackageDetails.js";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../../harness/process.js";

// A patch in patches/ is made against one version of its package; on any other, patch-package
// fails or, worse, applies a hunk where it no longer belongs. Each patched package stays pinned
// to the version its patch names until the patch is remade or dropped.
const patches = readdirSync(join(projectRoot, "patches")).filter((name) => name.endsWith(".patch"));
const manifest = JSON.parse(readFileSync(join(projectRoot, "package.json"), "utf8")) as Record<string, Record<string, string> | undefined>;
const pinned = (name: string) =>
  ["dependencies", "devDependencies", "optionalDependencies"].map((group) => manifest[group]?.[name]).find((version) => version !== undefined);

describe("patched dependencies", () => {
  it("name a package and a version in each patch's file name", () => {
    for (const patch of patches) expect(getPackageDetailsFromPatchFilename(patch), `patch-package cannot read ${patch}`).not.toBeNull();
  });

  describe.each(patches)("%s", (patch) => {
    const details = getPackageDetailsFromPatchFilename(patch);

    it("is installed at the version the patch names", () => {
      const installed = JSON.parse(readFileSync(join(projectRoot, details!.path, "package.json"), "utf8")) as { version: string };
      expect(installed.version, `${details!.name} is installed at ${installed.version}; patches/${patch} was made for ${details!.version}`).toBe(
        details!.version,
      );
    });

    it("is pinned in package.json to that exact version", () => {
      expect(details!.isNested, `${patch} patches a nested copy, which package.json cannot pin`).toBe(false);
      expect(pinned(details!.name), `package.json must pin ${details!.name} to exactly ${details!.version}, the version of patches/${patch}`).toBe(
        details!.version,
      );
    });
  });
});
