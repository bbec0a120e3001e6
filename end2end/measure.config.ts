import { defineConfig } from "@playwright/test";
import base from "./playwright.config";

// Measurements, not tests: run by scripts/bench.sh against the release build (see
// measure/first-paint.spec.ts); the e2e suite (playwright.config.ts) does not include them.
export default defineConfig({ ...base, testDir: "./measure", timeout: 300_000 });
