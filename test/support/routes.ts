/** A route's path with each parameter filled in by a placeholder id, for requests to every route. */
export const concrete = (path: string) => path.replace(/\{\w+\}/g, "x_1");
