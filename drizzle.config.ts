import { defineConfig } from "drizzle-kit";

// Migrations are generated from the schema files and committed; never edit an applied one.
export default defineConfig({
  dialect: "postgresql",
  schema: "./core/db/schema/*.ts",
  out: "./core/db/migrations",
});
