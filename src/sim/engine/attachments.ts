/**
 * `assets.persistChatAttachments` (RELEASED-0.1.md §3, operate scope): stores a message's
 * attachments before the message is sent and answers the references `message.dispatch` /
 * `launchThread.initialMessage` then carry (`[{type, id, name, mimeType, sizeBytes}]`).
 * T3's limits (chatAttachment.ts): at most 8 a message, an image ≤ 10 MiB, any other file
 * ≤ 20 MiB; `dataUrl` must be base64 and decode to `sizeBytes`. Bytes stay in memory.
 */
import type { Outcome } from "./engine.ts";
import { newId, type Row } from "./rows.ts";

const MAX_ATTACHMENTS = 8;
const MiB = 1024 * 1024;
const TYPES = new Set(["image", "file", "pdf", "video"]);

export interface AttachmentStore {
	persist(payload: Record<string, unknown>): Outcome;
	/** The stored reference of an id, or undefined when it was never persisted. */
	get(id: string): Row | undefined;
}

function limitFor(type: string): number {
	return type === "image" ? 10 * MiB : 20 * MiB;
}

export function createAttachmentStore(): AttachmentStore {
	const stored = new Map<string, Row>();
	const fail = (message: string): Outcome => ({
		fail: { _tag: "ChatAttachmentPersistError", message },
	});

	return {
		get: (id) => stored.get(id),
		persist(payload) {
			for (const key of ["threadId", "messageId", "attachments"])
				if (payload[key] === undefined)
					return { die: `Missing key\n  at ["${key}"]` };
			const list = payload.attachments;
			if (!Array.isArray(list))
				return { die: 'Expected an array\n  at ["attachments"]' };
			if (list.length > MAX_ATTACHMENTS)
				return {
					die: `Expected an array of at most ${MAX_ATTACHMENTS} items, got ${list.length}\n  at ["attachments"]`,
				};
			const refs: Row[] = [];
			for (const [i, raw] of list.entries()) {
				const a = (raw ?? {}) as Record<string, unknown>;
				const type = String(a.type);
				if (!TYPES.has(type))
					return {
						die: `Expected a known attachment type\n  at ["attachments"][${i}]["type"]`,
					};
				// T3's chat attachment schema: a trimmed non-empty name, a MIME type of ≤ 100.
				if (typeof a.name !== "string" || a.name.trim() === "")
					return {
						die: `Expected a non-empty string\n  at ["attachments"][${i}]["name"]`,
					};
				if (typeof a.mimeType !== "string" || a.mimeType.length > 100)
					return {
						die: `Expected a string of at most 100 characters\n  at ["attachments"][${i}]["mimeType"]`,
					};
				const size = Number(a.sizeBytes);
				if (size > limitFor(type))
					return fail(
						`Attachment ${String(a.name)} is larger than ${limitFor(type) / MiB} MiB.`,
					);
				const match = /^data:[^;,]*;base64,([A-Za-z0-9+/]*={0,2})$/.exec(
					String(a.dataUrl),
				);
				if (!match || Buffer.from(match[1] ?? "", "base64").length !== size)
					return fail(
						`Attachment ${String(a.name)} is not a base64 data URL of ${size} bytes.`,
					);
				refs.push({
					type,
					id: `attachment-${newId()}`,
					name: String(a.name),
					mimeType: String(a.mimeType),
					sizeBytes: size,
				});
			}
			for (const ref of refs) stored.set(String(ref.id), ref);
			return { ok: { attachments: refs } };
		},
	};
}
