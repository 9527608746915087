//! A client's subscriber objects: what `ALMemory.subscriber(event)` made for it, each with
//! the links its client made to the object's `signal`. The client's connection receives an
//! event from the broker while one of its objects for that event has a link.

use std::collections::{HashMap, HashSet};

/// The first id of a subscriber object within its service (1 is the service's main object).
const FIRST_OBJECT: u32 = 2;

pub(crate) struct Subscriber {
    pub(crate) service: u32,
    pub(crate) event: String,
    links: HashSet<u64>,
}

pub(crate) struct Objects {
    by_id: HashMap<u32, Subscriber>,
    next: u32,
}

impl Default for Objects {
    fn default() -> Self {
        Objects { by_id: HashMap::new(), next: FIRST_OBJECT }
    }
}

impl Objects {
    pub(crate) fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Links to every object's signal.
    pub(crate) fn links(&self) -> usize {
        self.by_id.values().map(|subscriber| subscriber.links.len()).sum()
    }

    /// A new subscriber to `event`, reached as an object of service `service`; answers its id.
    pub(crate) fn create(&mut self, service: u32, event: &str) -> u32 {
        let id = self.next;
        self.next = self.next.wrapping_add(1).max(FIRST_OBJECT);
        self.by_id.insert(id, Subscriber { service, event: event.to_owned(), links: HashSet::new() });
        id
    }

    /// Object `object` of service `service`.
    pub(crate) fn get(&self, service: u32, object: u32) -> Option<&Subscriber> {
        self.by_id.get(&object).filter(|subscriber| subscriber.service == service)
    }

    fn has_links(&self, event: &str) -> bool {
        self.by_id.values().any(|s| s.event == event && !s.links.is_empty())
    }

    /// Link `link` to object `object`'s signal; answers the event when it is the first link
    /// of this client to that event (the broker must stream it from now on).
    pub(crate) fn link(&mut self, object: u32, link: u64) -> Option<String> {
        let event = self.by_id.get(&object)?.event.clone();
        let first = !self.has_links(&event);
        self.by_id.get_mut(&object)?.links.insert(link);
        first.then_some(event)
    }

    /// Remove link `link` of object `object`; answers the event when no link to it is left.
    pub(crate) fn unlink(&mut self, object: u32, link: u64) -> Option<String> {
        let subscriber = self.by_id.get_mut(&object)?;
        if !subscriber.links.remove(&link) {
            return None;
        }
        let event = subscriber.event.clone();
        (!self.has_links(&event)).then_some(event)
    }

    /// Forget object `object` of service `service` (the client released it); answers the
    /// event when no link to it is left.
    pub(crate) fn remove(&mut self, service: u32, object: u32) -> Option<String> {
        self.get(service, object)?;
        let subscriber = self.by_id.remove(&object)?;
        (!subscriber.links.is_empty() && !self.has_links(&subscriber.event)).then_some(subscriber.event)
    }

    /// The objects (service, object) with a link to `event`.
    pub(crate) fn linked_to(&self, event: &str) -> Vec<(u32, u32)> {
        let mut linked: Vec<(u32, u32)> = self
            .by_id
            .iter()
            .filter(|(_, s)| s.event == event && !s.links.is_empty())
            .map(|(id, s)| (s.service, *id))
            .collect();
        linked.sort_unstable();
        linked
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_broker_streams_an_event_while_a_link_to_it_remains() {
        let mut objects = Objects::default();
        let (first, second) = (objects.create(2, "Touched"), objects.create(2, "Touched"));
        assert_eq!((first, second), (2, 3));
        assert!(objects.get(3, first).is_none(), "another service's object");
        assert_eq!(objects.link(first, 10).as_deref(), Some("Touched"));
        assert_eq!(objects.link(second, 11), None, "already streamed");
        assert_eq!(objects.linked_to("Touched"), [(2, 2), (2, 3)]);
        assert_eq!(objects.links(), 2);
        assert_eq!(objects.unlink(first, 10), None, "the second object still listens");
        assert_eq!(objects.unlink(first, 10), None, "no such link any more");
        assert_eq!(objects.remove(2, second).as_deref(), Some("Touched"));
        assert!(objects.linked_to("Touched").is_empty());
        assert_eq!(objects.remove(2, first), None, "it had no link left");
        assert_eq!(objects.len(), 0);
    }
}
