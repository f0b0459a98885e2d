// madge ships no type declarations; the import-circles test uses only its default export.
declare module "madge";
