package fake


func (s *Server) registerEvents()    {}
func (s *Server) registerOperators() {}
