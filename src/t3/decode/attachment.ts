/**
 * Chat attachment references (`assets.persistChatAttachments` answers and message rows,
 * RELEASED-0.1.md §3): `{type, id, name, mimeType, sizeBytes}`. Bytes never come back.
 */
import type { AttachmentRef } from "../model.ts";
import { arr, bad, isRecord, num, str } from "./json.ts";

export function decodeAttachmentRefs(raw: unknown): AttachmentRef[] {
	const out: AttachmentRef[] = [];
	for (const a of arr(raw)) {
		if (!isRecord(a) || typeof a.id !== "string") continue;
		out.push({
			...a,
			type: str(a.type) ?? "file",
			id: a.id,
			name: str(a.name) ?? "",
			mimeType: str(a.mimeType) ?? "application/octet-stream",
			sizeBytes: num(a.sizeBytes) ?? 0,
		});
	}
	return out;
}

/** The answer of `assets.persistChatAttachments`: one reference per attachment sent. */
export function decodePersistedAttachments(
	raw: unknown,
	expected: number,
): AttachmentRef[] {
	const refs = decodeAttachmentRefs(
		isRecord(raw) ? raw.attachments : undefined,
	);
	if (refs.length !== expected) throw bad("persistChatAttachments answer", raw);
	return refs;
}
