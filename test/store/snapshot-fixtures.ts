/**
 * Synthetic record details shaped like get-record answers, for tests that fill a
 * snapshot without HTTP.
 */
export const detailOf = (id: string, version = 0, extra: Record<string, unknown> = {}) => ({
  id,
  uid: `u${id}`,
  title: `Record ${id} v${version}`,
  done: version % 2 === 1,
  archived: false,
  position: Number(id.replace(/\D/g, "")) || 0,
  startedAt: null,
  duedAt: null,
  color: null,
  createdAt: "2026-01-01T00:00:00.000Z",
  updatedAt: `2026-01-0${1 + (version % 9)}T00:00:00.000Z`,
  todoList: { id: "l1", title: "Inbox" },
  users: [{ id: "u1", firstName: "Ada", lastName: "L", email: "ada@example.com" }],
  tags: [{ id: "t1", title: "red", color: "#f00" }, { id: "t2", title: "blue", color: null }],
  text: "plain",
  html: "<p>plain</p>",
  timezone: "",
  cover: "",
  commentCount: 0,
  checklistCount: 0,
  checklistCompletedCount: 0,
  isRepeating: false,
  checklists: [],
  customFields: [],
  ...extra
})

export const summaryOf = (detail: ReturnType<typeof detailOf>) => {
  const { text: _t, html: _h, timezone: _z, cover: _c, commentCount: _cc, checklistCount: _k, checklistCompletedCount: _kc, isRepeating: _r, checklists: _cl, customFields: _cf, ...summary } = detail
  return summary
}

export const activityOf = (recordId: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({
    __typename: i % 2 === 0 ? "Comment" : "Action",
    id: `${recordId}-a${i}`,
    html: i % 2 === 0 ? `<p>comment ${i}</p>` : null,
    createdAt: "2026-01-01T00:00:00.000Z",
    deletedAt: null,
    commentUser: i % 2 === 0 ? { id: "u1", fullName: "Ada L" } : null,
    type: i % 2 === 0 ? null : "UPDATE_TITLE",
    oldValue: i % 2 === 0 ? null : "old",
    newValue: i % 2 === 0 ? null : "new",
    automated: false,
    actionUser: i % 2 === 0 ? null : { id: "u1", fullName: "Ada L" },
    affectedBy: null,
    customField: null
  }))

export const fileOf = (id: string, version = 0) => ({
  id,
  uid: `f${id}`,
  name: `${id}.txt`,
  size: 10 + version,
  type: "text/plain",
  extension: "txt",
  status: "CONFIRMED",
  shared: false,
  createdAt: "2026-01-01T00:00:00.000Z",
  updatedAt: "2026-01-01T00:00:00.000Z",
  folder: null,
  todo: null,
  user: { id: "u1", fullName: "Ada L", email: "ada@example.com" }
})
