// The page's service worker: it shows the pushes the server sends when it is your move
// ("Your move: Connect Four against bob"), one per room at a time, and a click on one opens
// the room. It caches nothing: the page is always the server's latest.

self.addEventListener('push', (event) => {
  let push = {};
  try { push = event.data ? event.data.json() : {}; } catch { push = {}; }
  const title = push.title || 'Your move';
  event.waitUntil(self.registration.showNotification(title, {
    body: push.body || '',
    tag: push.room || 'turnhouse',
    renotify: true,
    data: { url: push.url || '/' },
  }));
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const url = (event.notification.data && event.notification.data.url) || '/';
  event.waitUntil((async () => {
    const open = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
    const same = open.find((client) => new URL(client.url).origin === new URL(url, self.location.origin).origin);
    if (same) {
      await same.navigate(url);
      return same.focus();
    }
    return self.clients.openWindow(url);
  })());
});
