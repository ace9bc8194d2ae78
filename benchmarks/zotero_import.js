// Import one export file through Zotero's own import translator, as Zotero would, and print
// the items it makes as JSON lines (item type, creators, tags, extra, ...).
//
//   node benchmarks/zotero_import.js ZOTERO_DIR TRANSLATOR FILE
//
// ZOTERO_DIR holds what Zotero's code is read from, never copied into this repository
// (zotero/translators, zotero/utilities and zotero/zotero-schema are AGPL):
//   ZOTERO_DIR/translators/{RIS.js,BibTeX.js,CSL JSON.js}
//   ZOTERO_DIR/utilities/   (a checkout of zotero/utilities)
//   ZOTERO_DIR/schema.json  (zotero/zotero-schema's schema.json)
// benchmarks/zotero_import.md says how to lay it out. What this file adds is the little of
// Zotero's translation environment those translators call: reading the input, collecting
// the items they complete, and their options.
"use strict";

const fs = require("fs");
const path = require("path");
const vm = require("vm");

const [zoteroDir, translatorName, inputFile] = process.argv.slice(2);
if (!inputFile) {
	console.error("usage: node zotero_import.js ZOTERO_DIR TRANSLATOR FILE");
	process.exit(2);
}
const utilities = path.join(zoteroDir, "utilities");

// Zotero's utilities as its own Node tests load them (zotero/utilities test/init.js).
globalThis.Zotero = { locale: "en-US", debug: () => {}, isNode: true };
Zotero.Schema = require(path.join(utilities, "schema"));
Zotero.Utilities = require(path.join(utilities, "utilities"));
Zotero.Utilities.Item = require(path.join(utilities, "utilities_item"));
Zotero.Date = require(path.join(utilities, "date"));
Zotero.Schema.init(fs.readFileSync(path.join(zoteroDir, "schema.json"), "utf-8"));
Zotero.Date.init(fs.readFileSync(path.join(utilities, "resource", "dateFormats.json"), "utf-8"));
const cachedTypes = require(path.join(utilities, "cachedTypes"));
cachedTypes.setTypeSchema(require(path.join(utilities, "resource", "zoteroTypeSchemaData")));
Object.assign(Zotero, cachedTypes);
const collator = new Intl.Collator(["en-US"], { numeric: true, sensitivity: "base" });
Zotero.localeCompare = (a, b) => collator.compare(a, b);

// The translation environment: Zotero.read() gives the input (a line, or n characters),
// new Zotero.Item(type).complete() hands an item back.
const input = fs.readFileSync(inputFile, "utf-8");
let at = 0;
const items = [];
function read(count) {
	if (at >= input.length) return false;
	if (typeof count === "number") {
		const piece = input.slice(at, at + count);
		at += count;
		return piece;
	}
	const end = input.indexOf("\n", at);
	const line = end < 0 ? input.slice(at) : input.slice(at, end);
	at = end < 0 ? input.length : end + 1;
	return line.replace(/\r$/, "");
}
class Item {
	constructor(itemType) {
		this.itemType = itemType;
		Object.assign(this, { creators: [], notes: [], tags: [], seeAlso: [], attachments: [] });
	}
	complete() { items.push(JSON.parse(JSON.stringify(this))); }
}
const env = {
	Zotero: Object.assign(Object.create(Zotero), {
		read, Item, debug: () => {}, setCharacterSet: () => {}, write: () => {},
		getOption: () => undefined, getHiddenPref: () => undefined,
		Utilities: Zotero.Utilities,
		done: () => {},
	}),
	ZU: Zotero.Utilities,
	Promise,
	console,
};
env.Z = env.Zotero;
env.Zotero.Utilities.itemFromCSLJSON = Zotero.Utilities.Item.itemFromCSLJSON;
env.Zotero.Utilities.itemToCSLJSON = Zotero.Utilities.Item.itemToCSLJSON;
env.Zotero.Utilities.fieldIsValidForType = (field, type) =>
	Zotero.ItemFields.isValidForType(Zotero.ItemFields.getID(field), Zotero.ItemTypes.getID(type));
env.Zotero.Utilities.getCreatorsForType = (type) =>
	Zotero.CreatorTypes.getTypesForItemType(Zotero.ItemTypes.getID(type)).map((t) => t.name);

// A translator is a JSON header, then its code (and a block of test cases).
const source = fs.readFileSync(path.join(zoteroDir, "translators", `${translatorName}.js`), "utf-8");
const header = source.indexOf("\n}\n");
vm.createContext(env);
vm.runInContext(source.slice(header + 3), env, { filename: `${translatorName}.js` });

(async () => {
	await env.doImport();
	for (const item of items) {
		console.log(JSON.stringify(item));
	}
})().catch((error) => {
	console.error(error && error.stack || error);
	process.exit(1);
});
