DROP TABLE lodge_nodes;
