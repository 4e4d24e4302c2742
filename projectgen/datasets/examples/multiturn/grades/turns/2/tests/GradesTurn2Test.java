import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

public class GradesTurn2Test {

    @Test
    public void theBandsStayAsTheyWere() {
        assertThat(Grades.letter(95)).isEqualTo("A");
        assertThat(Grades.letter(70)).isEqualTo("C");
    }

    @Test
    public void aNegativeScoreIsRefused() {
        assertThatThrownBy(() -> Grades.letter(-1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    public void aScoreAboveAHundredIsRefused() {
        assertThatThrownBy(() -> Grades.letter(101)).isInstanceOf(IllegalArgumentException.class);
    }
}
