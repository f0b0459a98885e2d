// patch-package ships no types; this is the part of its API the shape test uses: how it reads a
// patch file's name (the package, the nested path to it, the version the patch was made against).
declare module "patch-package/dist/PackageDetails.js" {
  export function getPackageDetailsFromPatchFilename(
    patchFilename: string,
  ): { name: string; version: string; path: string; packageNames: string[]; isNested: boolean } | null;
}
