// The version is package.json's, the one the CHANGELOG and a release name: the bundler inlines
// this one field (a named import of JSON keeps only the keys it names).
import { version } from "../../package.json";

export const SERVICE = { name: "edge-store", version };
