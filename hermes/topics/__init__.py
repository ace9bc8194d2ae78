"""Where a digest's topics come from: the tag co-occurrence graph and its communities
(:mod:`.tag_graph`), the topics of one window's items when tags cannot divide them
(:mod:`.window_topics`), and a topic's name (:mod:`.topic_labels`)."""
